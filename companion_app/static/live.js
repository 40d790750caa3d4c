/* The live page: redraws the board, scores, turn, history and alerts from each snapshot the
   server pushes over Server-Sent Events, and turns taps into corrections and take-backs. */
"use strict";

let state = null;
let shown = null;        // {run, version} of the snapshot on screen
let pickedTurn = null;
let pickedEvent;        // the event of the move the take-back dialog names, as it was shown
let alertsShown = "";    // ids of the alerts on screen: redrawn only when they change

const PIECE_NAMES = { 1: "monomino", 2: "domino", P01: "monohex", P02: "dihex",  // Blokus, Gemblo ids
                      "mini:petal": "petal mini-tile", "mini:triangle": "triangle mini-tile",  // Equilibrix
                      "?": "a shape no ring tile has" };

/* ---- panel ------------------------------------------------------------------------- */

function pieceName(piece) {
  return piece ? PIECE_NAMES[piece] || piece : "not a piece";
}

function moveName(turn) {
  const who = colourName(turn.colour);
  if (turn.pass) return `${who} passes`;
  return turn.obstacle ? `${who} obstacle · ${pieceName(turn.piece)}` : `${who} · ${pieceName(turn.piece)}`;
}

/* The alerts, newest first; two or more in a list of bounded height that scrolls inside
   (style.css): three alerts once pushed the turn line and "Game over" out of a landscape tablet's
   panel. Their count heads the list, so the ones scrolled out of sight are known to be there. */
function drawAlerts(s) {
  const ids = s.alerts.map((a) => `${a.id}:${a.message}`).join(" ");
  if (ids === alertsShown) return;  // redrawing would replay the arrival animation
  alertsShown = ids;
  const box = document.getElementById("alerts");
  const n = s.alerts.length;
  const count = n > 1 ? [el("p", { class: "alerts-count", text: `${n} alerts, newest first` })] : [];
  box.classList.toggle("many", n > 1);
  const newestFirst = s.alerts.slice().reverse();
  box.replaceChildren(...count, ...newestFirst.map((a) => el("section", { class: a.warning ? "alert warning" : "alert", "data-alert": a.id },
    el("div", { class: "alert-head" },
      el("span", { class: "rule", text: a.rule }),
      el("span", { text: `${a.warning ? "Check" : "Illegal"}: ${colourName(a.colour)}, move ${a.index + 1}` +
                         (a.piece ? ` (${pieceName(a.piece)})` : "") })),
    el("p", { class: "alert-msg", text: capitalise(a.message) + "." }),
    el("button", { class: "ack", type: "button", "data-ack": a.id, text: "Seen: dismiss" }))));
  box.scrollTop = 0;  // the newest in sight
}

function drawTurn(s) {
  const turn = document.getElementById("turn");
  if (s.game_over) {
    const best = s.scores.players.filter((p) => p.place === 1).map((p) => p.name);
    const verdict = best.length === 1 ? `${best[0]} wins` : `${best.join(" and ")} tie`;
    turn.replaceChildren(el("span", { text: `Game over: ${verdict}` }));
  } else {
    turn.replaceChildren(chip(s.to_move), el("span", { text: `${colourName(s.to_move)} to play` }));
  }
  document.getElementById("pass").hidden = s.game_over;
  const cam = document.getElementById("camera");
  cam.dataset.status = s.camera.status;
  cam.querySelector(".text").textContent = s.camera.message;
  drawHoldingHint(s);
}

/* Whether a change waits on rings (the strong ones, common.js unsureClasses): among dozens of
   faint doubts the player is pointed at the few a tap settles. No count: the strong rings are
   the new piece and the doubts beside it, and a tap or two on the doubts is often enough.
   With no doubt among them (``holding_doubts``) nothing waits to be read: the camera reads
   the change clearly and it is no move (a piece turned another colour, more pieces at once
   than a turn lays), so the table is asked to set it right; obstacles laid touching where bridges
   can be blocked (``holding_joined``) are one shape no tap can split, so the table is asked to lay
   them apart. */
function drawHoldingHint(s) {
  const hint = document.getElementById("holding-hint");
  const n = (s.holding || []).length;
  hint.hidden = n === 0;
  hint.dataset.count = n;
  hint.textContent = (s.holding_doubts || []).length
    ? "A move waits on the strong rings: tap a doubtful one to say what it holds"
    : (s.holding_joined || []).length
    ? "The ringed obstacles touch along an edge, so the camera cannot tell which pieces they are: lay them apart"
    : "The ringed change is no move the camera can log: tap a ring to say what it holds, or set the pieces right";
}

/* A finished game's tiebreak in words under the scores: "White wins" on equal points says
   nothing of why. Not during the game, when a tie (all at -89 at the start) decides nothing. */
function drawTiebreak(s) {
  const list = document.getElementById("tiebreak");
  list.replaceChildren(...(s.game_over ? tiebreakItems(s.scores) : []));
  list.hidden = !list.children.length;
}

/* An obstacle (``obstacle``: laid by the table, a colour that takes no turns) is listed without
   a move number: it is no player's move, and the turn stays where it was. */
function drawHistory(s) {
  const list = document.getElementById("history");
  const items = s.history.slice().reverse().map((t) => {
    const verdict = t.auto ? null : t.legal ? el("span", { class: "ok", text: "✓" })
      : el("span", { class: "bad", text: "⚠ " + t.details.map((d) => d.rule).join(" ") });
    return el("li", { class: t.auto ? "auto" : "", "data-index": t.index, value: t.obstacle ? null : t.index + 1,
                      tabindex: t.auto ? null : 0 },
      chip(t.colour), el("span", { class: "what", text: moveName(t) }), verdict);
  });
  list.replaceChildren(...items);
}

/* Links and buttons for some games only (data-games="blokus"). */
function showForGame(game) {
  for (const node of document.querySelectorAll("[data-games]")) {
    node.hidden = !node.dataset.games.split(" ").includes(game);
  }
}

function render(s) {
  state = s;
  document.body.dataset.game = s.session.game;
  drawBoard(s);
  markCorrected(s.corrected || []);  // the user's corrections still standing against the camera
  showForGame(s.session.game);
  drawAlerts(s);
  drawTurn(s);
  renderScores(document.getElementById("scores"), s.scores);
  drawTiebreak(s);
  drawHistory(s);
  const custom = BOARDS[s.layout.shape];
  const extra = document.getElementById("extra");
  if (custom && custom.panel) custom.panel(s, extra); else extra.replaceChildren();
}

/* ---- live updates ------------------------------------------------------------------ */

/* Snapshots reach the page two ways: streamed, and as the answer to the page's own action.
   An answer can arrive after a newer state was streamed (it was computed first, or a camera
   turn came in meanwhile), and nothing streams that newer state again: so only a newer
   snapshot is ever drawn. Versions are numbered by the server run across its sessions; a
   snapshot from another run is a restarted server, drawn whatever its version. */
function isNewer(s) {
  return shown === null || s.run !== shown.run || s.version > shown.version;
}

function show(s) {
  if (!isNewer(s)) return;
  shown = { run: s.run, version: s.version };
  render(s);
}

let source = null;
let retryMs = 1000;

function setConnection(kind, text) {
  const conn = document.getElementById("conn");
  conn.dataset.state = kind;
  conn.textContent = text;
}

function connect() {
  source = new EventSource("/events");
  source.addEventListener("open", () => { retryMs = 1000; setConnection("live", "live"); });
  source.addEventListener("state", (event) => {
    show(JSON.parse(event.data));
  });
  source.addEventListener("error", () => {
    // Reconnect ourselves with backoff: the browser gives up for good on some errors.
    source.close();
    setConnection("down", "reconnecting…");
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 10000);
  });
}

async function act(url, body, done) {
  try {
    show(await post(url, body));
    if (done) toast(done);
  } catch (err) {
    toast(capitalise(err.message), "error");
  }
}

/* ---- taps -------------------------------------------------------------------------- */

/* A correction tapped on the board (common.js' picker, or a board's own sheet) is posted. */
function correct(doc, done) {
  act("/api/correct", doc, done);
}

listenForCellTaps();

/* What the table does with a move taken back: a pass laid nothing, so nothing is lifted. */
const TAKEBACK_HINTS = {
  move: "Lift the piece off the board too. Later moves stay and are judged again.",
  pass: "Nothing to lift: the pass is struck from the record. Later moves stay and are judged again.",
};

function askTakeBack(item) {
  const index = Number(item.dataset.index);
  const turn = state && state.history[index];
  if (!turn || turn.auto) return;
  pickedTurn = index;
  pickedEvent = turn.event;
  document.getElementById("takeback-what").textContent = turn.obstacle ? moveName(turn)
    : `move ${index + 1}: ${moveName(turn)}`;
  document.getElementById("takeback-hint").textContent = TAKEBACK_HINTS[turn.pass ? "pass" : "move"];
  const custom = BOARDS[layout.shape];
  const details = document.getElementById("move-details");
  if (custom && custom.details) custom.details(state, turn, details); else details.replaceChildren();
  document.getElementById("takeback").showModal();
}

const historyList = document.getElementById("history");
historyList.addEventListener("click", (event) => {
  const item = event.target.closest("li");
  if (item) askTakeBack(item);
});
historyList.addEventListener("keydown", (event) => {
  if (event.key !== "Enter" || !event.target.matches("li")) return;
  // The key's own press, let through, reached the sheet's first button once it had opened:
  // Enter on a move took it back unasked, the sheet never seen.
  event.preventDefault();
  askTakeBack(event.target);
});

document.getElementById("takeback").addEventListener("close", (event) => {
  if (event.target.returnValue === "yes" && pickedTurn !== null) {
    // the event of the move the dialog named when it opened: a second tap (or tablet) taking
    // back the same move meanwhile is refused, not applied to the move that took its number
    act("/api/take-back", { index: pickedTurn, event: pickedEvent }, `Move ${pickedTurn + 1} taken back`);
  }
});

document.getElementById("alerts").addEventListener("click", (event) => {
  const button = event.target.closest("[data-ack]");
  if (button) act(`/api/alerts/${button.dataset.ack}/ack`);
});

// A second tap on Pass this soon after the first is the same tap (no two players pass within a
// second): it names the colour the first named, so the server refuses it even when the first
// pass's new state arrived between the taps and the page already shows the next colour to move.
const DOUBLE_TAP_MS = 1000;
let lastPass = { colour: null, at: -Infinity };

document.getElementById("pass").addEventListener("click", () => {
  if (!state || state.game_over) return;
  const now = Date.now();
  const colour = now - lastPass.at < DOUBLE_TAP_MS ? lastPass.colour : state.to_move;
  lastPass = { colour, at: now };
  act("/api/pass", { to_move: colour }, `${colourName(colour)} passes`);
});

/* connect() is called by the page once every board's script is loaded. */
