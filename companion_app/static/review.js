/* The review page: upload a photo of a finished board, see what was read as the game's own
   board (drawn as the live page draws it), tap what was misread to correct it, score again.
   Size and type are checked here for a quick answer and again by the server, which decides.
   Every tap is saved on the server at once (with the new scores), so a reload or a restart
   of the server keeps it; /review/<id> reopens a review. Only the cells tapped are sent, and
   the server sets them on the review as it has it: two tabs correcting one review both keep
   their corrections. Each tap also says what the tab showed on that cell; if another tab has
   set the cell since, the server refuses it (409), and the page shows what is there now with a
   one-line note, instead of the later tap silently winning. Cells the user set are ringed. */
"use strict";

const reviewForm = document.getElementById("review");
const maxBytes = Number(reviewForm.dataset.maxMb) * 1024 * 1024;
const VARIANTS = JSON.parse(document.getElementById("variants").textContent);
const reviewGame = document.getElementById("review-game");

let review = null;     // the review as the server last answered (contract state and scores inside)
let state = null;      // the board as the board scripts read it (see common.js' drawBoard)
let board = null;      // the contract state on screen: the server's, with the taps it has not answered yet
let unsure = new Set();  // keys of the cells still in doubt
let unsent = {};       // {cell key: what is there} tapped and not saved yet (sent with the next save)
let shown = {};        // {cell key: what the server had there as this tab showed it} for the cells in ``unsent``
let saving = Promise.resolve();
let pending = 0;       // saves not answered yet

/* Each game has its own variants: the list follows the game chosen. */
function drawVariants() {
  offerVariants(document.getElementById("review-variant"), document.getElementById("review-variant-about"),
                VARIANTS[reviewGame.value] || []);
}
reviewGame.addEventListener("change", drawVariants);
drawVariants();

function showError(message) {
  const box = document.getElementById("review-error");
  box.textContent = capitalise(message);
  box.hidden = !message;
}

/* ---- the reading as a board -------------------------------------------------------- */

/* ``{cell key: colour}`` of a Blokus, Gemblo or Equilibrix state. */
function cellsOf(game, s) {
  if (game === "blokus") {
    const out = {};
    s.board.forEach((row, r) => [...row].forEach((ch, c) => { if (ch !== ".") out[key(r, c)] = ch; }));
    return out;
  }
  return game === "equilibrix" ? s.fields : game === "gemblo" ? s.cells : {};
}

/* The reading dressed as a snapshot for the board scripts: cells, doubts, the flags' cells. */
function snapshot() {
  const r = review;
  const blocked = (t) => (t.blocked !== undefined ? t.blocked : t.stack.length >= 4);  // G4: the fourth chip blocks
  return {
    session: { id: r.id, game: r.game },
    layout: r.layout,
    cells: cellsOf(r.game, board),
    uncertain: r.read_uncertain.filter((c) => unsure.has(cellKey(c))).map((c) => cellValue(cellKey(c))),
    last: null,
    alerts: r.scores.flags.map((f) => ({ cells: f.cells, piece_cells: [] })),
    players: r.layout.pickable.map((c) => ({ colours: [c] })),  // any chip colour may be the right one
    geometrius: r.game === "geometrius" ? { waiting: false, tokens: board.tokens.map((t) => ({ ...t, blocked: blocked(t) })) } : null,
  };
}

function drawReading() {
  state = snapshot();
  drawBoard(state);
  markCorrected(userSet());
}

/* What a contract state has on cell ``k``, in the form a tap sets it (a colour letter or ".",
   a Geometrius token as {shape, stack}): as review.py's content_at. */
function contentAt(s, k) {
  const game = review.game;
  if (game === "geometrius") {
    const t = s.tokens.find((x) => cellKey([x.row, x.col]) === k);
    return t ? { shape: t.shape, stack: t.stack || [] } : null;
  }
  if (game === "blokus") {
    const [r, c] = cellValue(k);
    return s.board[r][c];
  }
  return (game === "equilibrix" ? s.fields : s.cells)[k] || ".";
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/* The cells the user set: the server's corrections, with the taps it has not answered yet (a
   cell differing from the reading, or a doubted one; one set back to a confident reading is
   none, as review.py's ``corrected`` decides). */
function userSet() {
  const out = new Set(review.corrections);
  const doubted = new Set(review.read_uncertain.map(cellKey));
  for (const k of Object.keys(unsent)) {
    if (doubted.has(k) || !same(contentAt(review.read, k), contentAt(board, k))) out.add(k); else out.delete(k);
  }
  return [...out];
}

/* ---- corrections ------------------------------------------------------------------- */

/* A tap's choice (common.js' picker or a token's sheet): what is now there, set on the board
   and saved. */
function correct(doc, done) {
  let k, content;
  if (doc.cell !== undefined) {
    k = cellKey(doc.cell);
    content = doc.colour;
  } else {
    k = cellKey(doc.at);
    const token = board.tokens.find((t) => cellKey([t.row, t.col]) === k);
    if (!token) return;
    content = { ...token };
    if (doc.shape !== undefined) {
      content.shape = doc.shape;
    } else if (doc.top === ".") {
      content.stack = token.stack.slice(0, -1);  // the chip read on top is not there
    } else {
      content.stack = token.stack.length ? [...token.stack.slice(0, -1), doc.top] : [doc.top];
    }
  }
  if (!(k in unsent)) shown[k] = contentAt(board, k);  // a cell tapped again keeps what the server had
  document.getElementById("review-conflict").hidden = true;
  setCell(board, k, content);
  unsure.delete(k);
  save({ [k]: content }, done);
  drawReading();  // the tap is among the unsent ones now: ringed at once
}

/* A cell of a contract state set to what is there (a colour letter or "."; a Geometrius
   token), as the server sets it (review.py's with_cells). */
function setCell(s, k, content) {
  const game = review.game;
  if (game === "geometrius") {
    const i = s.tokens.findIndex((t) => cellKey([t.row, t.col]) === k);
    if (i >= 0) s.tokens[i] = { ...content, row: s.tokens[i].row, col: s.tokens[i].col };
  } else if (game === "blokus") {
    const [r, c] = cellValue(k);
    s.board[r] = s.board[r].slice(0, c) + content + s.board[r].slice(c + 1);
  } else {
    const cells = game === "equilibrix" ? s.fields : s.cells;
    if (content === ".") delete cells[k]; else cells[k] = content;
  }
}

function showSaved(kind, text) {
  const box = document.getElementById("review-saved");
  box.dataset.state = kind;
  box.textContent = text;
}

/* Send the cells tapped and not saved yet; the server sets them on the review, checks the
   board by the rules, scores it and saves it. Saves go one after another; until the server
   has a tap it is also kept in the tablet's storage, and a reload sends it again (see
   openReview). When no save is left waiting, the board shown is the server's: a correction
   made meanwhile in another tab appears. A save belongs to the review it was made on: if
   another review is opened while it waits, it still goes to its own review, and its answer
   is not drawn over the new one. Taps the server refuses (4xx: the rules say no) are dropped,
   as sending them again would be refused again and hold up every later tap; only taps the
   server never got (unreachable, 5xx) wait for the next save. A tap on a cell another tab set
   meanwhile is refused with what is there now (409): that cell shows it, with a note, and the
   other taps of the save are sent again. */
function save(changes, done) {
  const id = review.id, mine = unsent, was = shown;  // openReview gives each review its own
  const url = `/api/review/${id}/state`;
  const name = keptName(id), wasName = keptWasName(id);
  Object.assign(mine, changes);
  keep(name, mine);
  keep(wasName, Object.keys(was).length ? was : null);
  pending += 1;
  showSaved("saving", "Saving…");
  saving = saving.then(async () => {
    const sent = JSON.parse(JSON.stringify(mine));
    const sentWas = Object.fromEntries(Object.keys(sent).filter((k) => k in was).map((k) => [k, was[k]]));
    const remember = () => {
      keep(name, Object.keys(mine).length ? mine : null);
      keep(wasName, Object.keys(was).length ? was : null);
    };
    /* The sent taps done with: dropped unless tapped again since; a cell tapped again is now
       expected to hold what was sent, if the server took it. */
    const settle = (taken, cells) => {
      for (const k of cells) {
        if (same(mine[k], sent[k])) { delete mine[k]; delete was[k]; } else if (taken) was[k] = sent[k];
      }
      remember();
    };
    try {
      const answer = await post(url, Object.keys(sentWas).length ? { set: sent, was: sentWas } : { set: sent });
      pending -= 1;
      settle(true, Object.keys(sent));
      if (review.id !== id) return;  // another review is on screen now
      review = answer;
      if (!pending) {
        showBoard();
        showVerdict();
        showSaved("saved", savedText());
      }
      showRecent();
      if (done) toast(done);
    } catch (err) {
      pending -= 1;
      const current = err.status === 409 && err.detail && err.detail.current;
      if (current) {
        // Made on the old content, so dropped (even if tapped again since); the other taps stay.
        for (const k of Object.keys(current)) { delete mine[k]; delete was[k]; }
        remember();
        if (review.id !== id) return;  // the other taps are sent when this review is opened again
        for (const [k, now] of Object.entries(current)) setCell(review.state, k, now);
        showConflict(current, sent);
        save({});  // the other taps again, and the review as it is now
        return;
      }
      const refused = err.status >= 400 && err.status < 500;
      if (refused) settle(false, Object.keys(sent));
      if (review.id !== id) return;
      if (refused) {
        showBoard();  // the board as the server has it: the refused taps undone
        showSaved("failed", `Not saved, the tap is undone: ${err.message}`);
      } else {
        showSaved("failed", `Not saved: ${err.message}`);
      }
      toast(capitalise(err.message), "error");
    }
  });
  return saving;
}

/* The note for cells another tab set first: where, what is there now, what was not saved. */
function showConflict(current, sent) {
  const box = document.getElementById("review-conflict");
  box.textContent = Object.entries(current).map(([k, now]) =>
    `${capitalise(cellName(cellValue(k)))} was set on another screen meanwhile: it is ${contentName(now)} now, `
    + `your ${contentName(sent[k])} was not saved (tap it again to change it).`).join(" ");
  box.hidden = false;
  showBoard();
}

/* The review's board as the server has it, with the taps it does not have yet. */
function showBoard() {
  board = JSON.parse(JSON.stringify(review.state));
  unsure = new Set(review.uncertain.map(cellKey));
  for (const [k, content] of Object.entries(unsent)) {
    setCell(board, k, content);
    unsure.delete(k);
  }
  drawReading();
}

const keptName = (id) => `tableref-review-cells-${id}`;
const keptWasName = (id) => `tableref-review-was-${id}`;

/* An older page kept a whole board state under another name; that cannot be sent as taps
   (it would undo corrections made since in another tab), so it is dropped, once, with a note.
   True when there was one. */
function dropOldKept(id) {
  const old = `tableref-review-${id}`;
  const body = kept(old);
  keep(old, null);
  return body !== null;
}

/* The tablet's copy of the taps not saved yet (storage may be off: then there is none). */
function keep(name, body) {
  try {
    if (body) localStorage.setItem(name, JSON.stringify(body)); else localStorage.removeItem(name);
  } catch (err) { /* private browsing: the server's copy is all there is */ }
}

function kept(name) {
  try {
    return JSON.parse(localStorage.getItem(name) || "null");
  } catch (err) {
    return null;
  }
}

function savedText() {
  const n = review.corrections.length;
  return n ? `${n} correction${n === 1 ? "" : "s"} saved` : "Saved as read";
}

/* ---- the page ---------------------------------------------------------------------- */

function showVerdict() {
  const scores = review.scores;
  renderScores(document.getElementById("review-scores"), scores);
  const notes = [
    ...scores.flags.map((f) => el("li", { class: "flag" }, el("span", { class: "rule", text: f.rule }), " " + capitalise(f.message))),
    ...scores.undecided.map((u) => el("li", { class: "undecided" }, el("span", { class: "rule", text: u.rule }), " " + capitalise(u.message))),
    ...tiebreakItems(scores),
  ];
  document.getElementById("review-notes").replaceChildren(...notes);
  document.getElementById("review-download").href = review.download;
}

function showImages() {
  const captions = { overlay: "What was read", rectified: "The board, straightened" };
  const order = (name) => (name in captions ? Object.keys(captions).indexOf(name) : 9);
  const images = Object.entries(review.images).sort(([a], [b]) => order(a) - order(b));
  document.getElementById("shots").replaceChildren(...images.map(([name, url]) =>
    el("figure", { class: "shot" }, el("img", { src: url, alt: captions[name] || name }),
       el("figcaption", { text: captions[name] || name }))));
}

/* A review from the server (just scored, or reopened) on screen, ready to be corrected. */
function openReview(doc, scroll) {
  review = doc;
  unsent = kept(keptName(doc.id)) || {};  // taps the server never got (it was unreachable)
  shown = kept(keptWasName(doc.id)) || {};
  document.getElementById("review-conflict").hidden = true;
  document.body.dataset.game = doc.game;  // the game's colour names and columns
  builtFor = null;  // a new board: built afresh even for the same game
  showBoard();
  showVerdict();
  showImages();
  showSaved("saved", savedText());
  document.getElementById("review-title").textContent =
    `What the camera read: ${capitalise(doc.game)}, ${doc.variant}`;
  const section = document.getElementById("review-result");
  section.hidden = false;
  if (scroll) section.scrollIntoView({ behavior: "smooth", block: "start" });
  if (Object.keys(unsent).length) save({}, "Corrections made while the server was away are saved");
  if (dropOldKept(doc.id)) {
    toast("Corrections this tablet kept from an older version of the page could not be sent: "
          + "check the board and tap them again", "error");
  }
}

/* The reviews kept on this table, newest first, as links that reopen them. */
function listRecent(reviews) {
  document.getElementById("recent").replaceChildren(...reviews.map((r) => el("li", {},
    el("a", { href: `/review/${r.id}`, "data-review": r.id },
       el("span", { class: "when", text: r.when }),
       ` ${capitalise(r.game)} (${r.variant || "default"})`,
       r.leader ? ` · ${r.leader} leads` : "",
       r.fixed ? ` · ${r.fixed} corrected` : "",
       r.doubts ? ` · ${r.doubts} unsure` : "",
       r.damaged ? " · damaged: kept in the file, cannot be opened" : ""))));
  document.getElementById("recent-none").hidden = reviews.length > 0;
}

/* The list again from the server: a review just scored or corrected shows in it. */
function showRecent() {
  ask("/api/reviews")
    .then((doc) => listRecent(doc.reviews))
    .catch(() => {});  // the list is a convenience: the review itself is saved
}

reviewForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  showError("");
  document.getElementById("review-result").hidden = true;
  const file = document.getElementById("photo").files[0];
  if (!file) { showError("choose a photo of the finished board first"); return; }
  if (file.size > maxBytes) {
    showError(`that file is larger than ${reviewForm.dataset.maxMb} MB: take the photo at a lower resolution`);
    return;
  }
  const button = document.getElementById("review-go");
  button.disabled = true;
  button.textContent = "Reading the photo…";
  try {
    const doc = await post("/api/review", new FormData(reviewForm));
    history.pushState(null, "", `/review/${doc.review.id}`);  // a reload reopens this review
    openReview(doc.review, true);
    showRecent();
  } catch (err) {
    showError(err.message);
  } finally {
    button.disabled = false;
    button.textContent = "Score the photo";
  }
});

document.getElementById("review-again").addEventListener("click", () => {
  if (review) save({}, "Scored again");
});

listenForCellTaps();
listRecent(JSON.parse(document.getElementById("recent-reviews").textContent));

/* /review/<id>: reopen the saved review. */
const reopen = document.getElementById("review-page").dataset.review;
if (reopen) {
  ask(`/api/review/${encodeURIComponent(reopen)}`)
    .then((doc) => openReview(doc, false))
    .catch((err) => showError(err.message));
}
