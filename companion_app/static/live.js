/* The live page: redraws the board, scores, turn, history and alerts from each snapshot the
   server pushes over Server-Sent Events, and turns taps into corrections and take-backs. */
"use strict";

const SVG = "http://www.w3.org/2000/svg";
let state = null;
let shown = "";          // session id and version of the snapshot on screen
let cellNodes = [];      // [row][col] -> <rect>
let pickedCell = null;
let pickedTurn = null;
let alertsShown = "";    // ids of the alerts on screen: redrawn only when they change

const PIECE_NAMES = { 1: "monomino", 2: "domino" };

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  return node;
}

/* ---- board ------------------------------------------------------------------------- */

function buildBoard(size) {
  const board = document.getElementById("board");
  board.setAttribute("viewBox", `-0.5 -0.5 ${size + 1} ${size + 1}`);
  board.replaceChildren();
  const defs = svg("defs");
  const hatch = svg("pattern", { id: "hatch", width: 0.25, height: 0.25, patternUnits: "userSpaceOnUse",
                                 patternTransform: "rotate(45)" });
  hatch.append(svg("rect", { width: 0.12, height: 0.25, class: "hatch" }));
  defs.append(hatch);
  board.append(defs, svg("rect", { x: -0.5, y: -0.5, width: size + 1, height: size + 1, rx: 0.4, class: "frame" }));
  const cells = svg("g", { class: "cells" });
  cellNodes = [];
  for (let r = 0; r < size; r++) {
    const row = [];
    for (let c = 0; c < size; c++) {
      const rect = svg("rect", { x: c + 0.04, y: r + 0.04, width: 0.92, height: 0.92, rx: 0.12,
                                 class: "cell", "data-row": r, "data-col": c, "data-colour": "." });
      cells.append(rect);
      row.push(rect);
    }
    cellNodes.push(row);
  }
  board.append(cells);
  for (const [r, c] of [[0, 0], [0, size - 1], [size - 1, 0], [size - 1, size - 1]]) {
    board.append(svg("circle", { cx: c + 0.5, cy: r + 0.5, r: 0.12, class: "corner" }));
  }
  board.append(svg("g", { class: "marks", id: "marks" }));
}

/* The outline of a set of cells: the sides that do not border another cell of the set. */
function outline(cells) {
  const inSet = new Set(cells.map(([r, c]) => `${r},${c}`));
  const parts = [];
  for (const [r, c] of cells) {
    if (!inSet.has(`${r - 1},${c}`)) parts.push(`M${c} ${r}h1`);
    if (!inSet.has(`${r + 1},${c}`)) parts.push(`M${c} ${r + 1}h1`);
    if (!inSet.has(`${r},${c - 1}`)) parts.push(`M${c} ${r}v1`);
    if (!inSet.has(`${r},${c + 1}`)) parts.push(`M${c + 1} ${r}v1`);
  }
  return parts.join("");
}

function drawBoard(s) {
  if (cellNodes.length !== s.size) buildBoard(s.size);
  for (let r = 0; r < s.size; r++) {
    for (let c = 0; c < s.size; c++) cellNodes[r][c].dataset.colour = s.board[r][c];
  }
  const marks = document.getElementById("marks");
  marks.replaceChildren();
  for (const [r, c] of s.uncertain) {
    marks.append(svg("rect", { x: c + 0.1, y: r + 0.1, width: 0.8, height: 0.8, class: "unsure" }));
    const q = svg("text", { x: c + 0.5, y: r + 0.56, class: "unsure-text" });
    q.textContent = "?";
    marks.append(q);
  }
  if (s.last && s.last.cells.length) {
    marks.append(svg("path", { d: outline(s.last.cells), class: "last" }));
  }
  for (const alert of s.alerts) {
    for (const [r, c] of alert.cells) {
      marks.append(svg("rect", { x: c, y: r, width: 1, height: 1, class: "offending" }));
    }
    if (!alert.piece_cells.length) continue;
    const d = outline(alert.piece_cells);
    marks.append(svg("path", { d, class: "illegal-halo" }), svg("path", { d, class: "illegal" }));
  }
}

/* ---- panel ------------------------------------------------------------------------- */

function pieceName(piece) {
  return piece ? PIECE_NAMES[piece] || piece : "not a piece";
}

function moveName(turn) {
  const who = colourName(turn.colour);
  return turn.pass ? `${who} passes` : `${who} · ${pieceName(turn.piece)}`;
}

function colourName(colour) {
  return COLOUR_NAMES[colour] || colour;
}

function drawAlerts(s) {
  const ids = s.alerts.map((a) => `${a.id}:${a.message}`).join(" ");
  if (ids === alertsShown) return;  // redrawing would replay the arrival animation
  alertsShown = ids;
  const box = document.getElementById("alerts");
  box.replaceChildren(...s.alerts.map((a) => el("section", { class: a.warning ? "alert warning" : "alert", "data-alert": a.id },
    el("div", { class: "alert-head" },
      el("span", { class: "rule", text: a.rule }),
      el("span", { text: `${a.warning ? "Check" : "Illegal"}: ${colourName(a.colour)}, move ${a.index + 1}` +
                         (a.piece ? ` (${pieceName(a.piece)})` : "") })),
    el("p", { class: "alert-msg", text: capitalise(a.message) + "." }),
    el("button", { class: "ack", type: "button", "data-ack": a.id, text: "Seen: dismiss" }))));
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
}

function drawHistory(s) {
  const list = document.getElementById("history");
  const items = s.history.slice().reverse().map((t) => {
    const verdict = t.auto ? null : t.legal ? el("span", { class: "ok", text: "✓" })
      : el("span", { class: "bad", text: "⚠ " + t.details.map((d) => d.rule).join(" ") });
    return el("li", { class: t.auto ? "auto" : "", "data-index": t.index, value: t.index + 1, tabindex: t.auto ? null : 0 },
      chip(t.colour), el("span", { class: "what", text: moveName(t) }), verdict);
  });
  list.replaceChildren(...items);
}

function render(s) {
  state = s;
  drawBoard(s);
  drawAlerts(s);
  drawTurn(s);
  renderScores(document.getElementById("scores"), s.scores);
  drawHistory(s);
}

/* ---- live updates ------------------------------------------------------------------ */

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
    const s = JSON.parse(event.data);
    const key = `${s.session.id}:${s.version}`;
    if (key !== shown) { shown = key; render(s); }
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
    const s = await post(url, body);
    shown = `${s.session.id}:${s.version}`;
    render(s);
    if (done) toast(done);
  } catch (err) {
    toast(capitalise(err.message), "error");
  }
}

/* ---- taps -------------------------------------------------------------------------- */

function cellName(r, c) {
  return `row ${r + 1}, column ${c + 1}`;
}

document.getElementById("board").addEventListener("click", (event) => {
  const rect = event.target.closest(".cell");
  if (!rect || !state) return;
  pickedCell = [Number(rect.dataset.row), Number(rect.dataset.col)];
  document.getElementById("picker-cell").textContent = cellName(...pickedCell);
  document.getElementById("picker").showModal();
});

document.getElementById("picker").addEventListener("close", (event) => {
  const colour = event.target.returnValue;
  if (!colour || !pickedCell) return;
  const [row, col] = pickedCell;
  act("/api/correct", { row, col, colour }, `Corrected ${cellName(row, col)} to ${COLOUR_NAMES[colour].toLowerCase()}`);
});

function askTakeBack(item) {
  const index = Number(item.dataset.index);
  const turn = state && state.history[index];
  if (!turn || turn.auto) return;
  pickedTurn = index;
  document.getElementById("takeback-what").textContent = `move ${index + 1}: ${moveName(turn)}`;
  document.getElementById("takeback").showModal();
}

const historyList = document.getElementById("history");
historyList.addEventListener("click", (event) => {
  const item = event.target.closest("li");
  if (item) askTakeBack(item);
});
historyList.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && event.target.matches("li")) askTakeBack(event.target);
});

document.getElementById("takeback").addEventListener("close", (event) => {
  if (event.target.returnValue === "yes" && pickedTurn !== null) {
    act("/api/take-back", { index: pickedTurn }, `Move ${pickedTurn + 1} taken back`);
  }
});

document.getElementById("alerts").addEventListener("click", (event) => {
  const button = event.target.closest("[data-ack]");
  if (button) act(`/api/alerts/${button.dataset.ack}/ack`);
});

document.getElementById("pass").addEventListener("click", () => {
  if (state && !state.game_over) act("/api/pass", undefined, `${colourName(state.to_move)} passes`);
});

connect();
