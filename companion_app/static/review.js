/* The review page: upload a photo of a finished board, see what was read as the game's own
   board (drawn as the live page draws it), tap what was misread to correct it, score again.
   Size and type are checked here for a quick answer and again by the server, which decides.
   Every correction is saved on the server at once (with the new scores), so a reload or a
   restart of the server keeps it; /review/<id> reopens a review. */
"use strict";

const reviewForm = document.getElementById("review");
const maxBytes = Number(reviewForm.dataset.maxMb) * 1024 * 1024;
const VARIANTS = JSON.parse(document.getElementById("variants").textContent);
const reviewGame = document.getElementById("review-game");

let review = null;     // the review as the server last answered (contract state and scores inside)
let state = null;      // the board as the board scripts read it (see common.js' drawBoard)
let board = null;      // the contract state being corrected (review.state plus the taps)
let unsure = new Set();  // keys of the cells still in doubt
let confirmed = new Set();  // keys of the cells the user tapped (a doubt settled even if unchanged)
let saving = Promise.resolve();
let pending = 0;       // saves not answered yet

/* Each game has its own variants: the list follows the game chosen. */
reviewGame.addEventListener("change", () => {
  document.getElementById("review-variant").replaceChildren(...(VARIANTS[reviewGame.value] || []).map(
    ([code, label]) => el("option", { value: code, text: label })));
});

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
}

/* ---- corrections ------------------------------------------------------------------- */

/* A tap's choice (common.js' picker or a token's sheet) set in the state being corrected. */
function correct(doc, done) {
  const game = review.game;
  if (doc.cell !== undefined) {
    const k = cellKey(doc.cell);
    if (game === "blokus") {
      const [r, c] = doc.cell;
      const row = board.board[r];
      board.board[r] = row.slice(0, c) + doc.colour + row.slice(c + 1);
    } else {
      const cells = game === "equilibrix" ? board.fields : board.cells;
      if (doc.colour === ".") delete cells[k]; else cells[k] = doc.colour;
    }
    settle(k);
  } else {
    const token = board.tokens.find((t) => t.row === doc.at[0] && t.col === doc.at[1]);
    if (!token) return;
    if (doc.shape !== undefined) {
      token.shape = doc.shape;
    } else if (doc.top === ".") {
      token.stack = token.stack.slice(0, -1);  // the chip read on top is not there
    } else {
      token.stack = token.stack.length ? [...token.stack.slice(0, -1), doc.top] : [doc.top];
    }
    settle(cellKey(doc.at));
  }
  drawReading();
  save(done);
}

function settle(k) {
  unsure.delete(k);
  confirmed.add(k);
}

function showSaved(kind, text) {
  const box = document.getElementById("review-saved");
  box.dataset.state = kind;
  box.textContent = text;
}

/* Send the corrected state; the server checks it by the rules, scores it and saves it.
   Saves go one after another, so the last tap is the one kept. Until the server has it, the
   board is also kept in the tablet's storage: a reload sends it again (see openReview). */
function save(done) {
  const url = `/api/review/${review.id}/state`;
  const body = { state: JSON.parse(JSON.stringify(board)), confirmed: [...confirmed].map(cellValue) };
  const kept = `tableref-review-${review.id}`;
  keep(kept, body);
  pending += 1;
  showSaved("saving", "Saving…");
  saving = saving.then(async () => {
    try {
      const answer = await post(url, body);
      pending -= 1;
      if (!pending) {
        review = answer;
        showVerdict();
        showSaved("saved", savedText());
        keep(kept, null);
      }
      if (done) toast(done);
    } catch (err) {
      pending -= 1;
      showSaved("failed", `Not saved: ${err.message}`);
      toast(capitalise(err.message), "error");
    }
  });
  return saving;
}

/* The tablet's copy of a board not yet saved (storage may be off: then there is none). */
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
    ...scores.tiebreak.map((words) => el("li", { text: "Tiebreak: " + words })),
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
  board = JSON.parse(JSON.stringify(doc.state));
  unsure = new Set(doc.uncertain.map(cellKey));
  confirmed = new Set(doc.corrections);
  document.body.dataset.game = doc.game;  // the game's colour names and columns
  builtFor = null;  // a new board: built afresh even for the same game
  const unsaved = kept(`tableref-review-${doc.id}`);  // taps the server never got (it was unreachable)
  const restore = Boolean(unsaved && unsaved.state && unsaved.state.game === doc.game);
  if (restore) {
    board = unsaved.state;
    for (const c of unsaved.confirmed || []) settle(cellKey(c));
  }
  drawReading();
  showVerdict();
  showImages();
  showSaved("saved", savedText());
  document.getElementById("review-title").textContent =
    `What the camera read: ${capitalise(doc.game)}, ${doc.variant}`;
  const section = document.getElementById("review-result");
  section.hidden = false;
  if (scroll) section.scrollIntoView({ behavior: "smooth", block: "start" });
  if (restore) save("Corrections made while the server was away are saved");
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
  } catch (err) {
    showError(err.message);
  } finally {
    button.disabled = false;
    button.textContent = "Score the photo";
  }
});

document.getElementById("review-again").addEventListener("click", () => {
  if (review) save("Scored again");
});

listenForCellTaps();

/* /review/<id>: reopen the saved review. */
const reopen = document.getElementById("review-page").dataset.review;
if (reopen) {
  fetch(`/api/review/${encodeURIComponent(reopen)}`)
    .then((response) => response.json().then((doc) => {
      if (!response.ok) throw new Error(doc.error ? doc.error.message : `the server answered ${response.status}`);
      openReview(doc, false);
    }))
    .catch((err) => showError(err.message));
}
