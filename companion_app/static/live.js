/* The live page: redraws the board, scores, turn, history and alerts from each snapshot the
   server pushes over Server-Sent Events, and turns taps into corrections and take-backs. */
"use strict";

const SVG = "http://www.w3.org/2000/svg";
let state = null;
let shown = "";          // session id and version of the snapshot on screen
let cellNodes = new Map();  // "a,b" -> the cell's polygon
let layout = null;       // the board's drawing (static per game, from the snapshot)
let builtFor = null;     // the session whose board is built
let centres = new Map(); // "a,b" -> [x, y]
let pickedCell = null;
let pickedTurn = null;
let alertsShown = "";    // ids of the alerts on screen: redrawn only when they change

const PIECE_NAMES = { 1: "monomino", 2: "domino", P01: "monohex", P02: "dihex",  // Blokus, Gemblo ids
                      "mini:petal": "petal mini-tile", "mini:triangle": "triangle mini-tile",  // Equilibrix
                      "?": "a shape no ring tile has" };

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  return node;
}

/* ---- board ------------------------------------------------------------------------- */
/* One drawing for every board: the layout gives each cell's centre and the cell polygon
   (squares for Blokus, flat-topped hexes for Gemblo), with neighbouring centres 1 apart. */

const fx = (v) => Math.round(v * 1000) / 1000;

/* The board's <defs>: the stripes that fill unsure cells, ``size`` apart in board units (each
   board draws at its own scale: square and hex cells, Equilibrix fields, Geometrius tokens). */
function hatchDefs(size) {
  const defs = svg("defs");
  const hatch = svg("pattern", { id: "hatch", width: size, height: size, patternUnits: "userSpaceOnUse",
                                 patternTransform: "rotate(45)" });
  hatch.append(svg("rect", { width: fx(size / 2), height: size, class: "hatch" }));
  defs.append(hatch);
  return defs;
}
const key = (a, b) => `${a},${b}`;
/* A cell as the snapshot names it: [a, b] on the square and hex boards, an Equilibrix field
   id ("P 0 0 1"), a Geometrius token place [row, col]. */
const cellKey = (c) => (Array.isArray(c) ? c.join(",") : String(c));
const cellValue = (k) => (/^-?\d+,-?\d+$/.test(k) ? k.split(",").map(Number) : k);

/* Boards other than the square and hex grids draw themselves (flower.js, tokens.js). */
const BOARDS = {};

function points(x, y, scale) {
  return layout.polygon.map(([px, py]) => `${fx(x + px * scale)},${fx(y + py * scale)}`).join(" ");
}

function buildBoard(l) {
  layout = l;
  centres = new Map(l.cells.map(([a, b, x, y]) => [key(a, b), [x, y]]));
  const board = document.getElementById("board");
  const xs = l.cells.map((c) => c[2]), ys = l.cells.map((c) => c[3]);
  const reach = Math.max(...l.polygon.map(([px, py]) => Math.hypot(px, py))) + 0.4;
  const x0 = Math.min(...xs) - reach, y0 = Math.min(...ys) - reach;
  board.setAttribute("viewBox", `${fx(x0)} ${fx(y0)} ${fx(Math.max(...xs) + reach - x0)} ${fx(Math.max(...ys) + reach - y0)}`);
  board.dataset.shape = l.shape;
  board.replaceChildren();
  const defs = hatchDefs(0.25);
  const frame = svg("g", { class: "frame" });
  const cells = svg("g", { class: "cells" });
  cellNodes = new Map();
  for (const [a, b, x, y, inZone] of l.cells) {
    frame.append(svg("polygon", { points: points(x, y, 1) }));
    const cell = svg("polygon", { points: points(x, y, 0.92), class: inZone ? "cell" : "cell out",
                                  "data-cell": key(a, b), "data-colour": "." });
    cells.append(cell);
    cellNodes.set(key(a, b), cell);
  }
  const starts = svg("g", { class: "starts" });
  for (const [a, b, colour] of l.starts) {
    const [x, y] = centres.get(key(a, b));
    starts.append(svg("circle", { cx: x, cy: y, r: 0.16, class: "start", "data-colour": colour || "" }));
  }
  board.append(defs, frame, cells, starts, svg("g", { class: "marks", id: "marks" }));
}

/* The outline of a set of cells: the polygon sides that do not border another cell of the set. */
function outline(cells) {
  const inSet = new Set(cells.map(([a, b]) => key(a, b)));
  const poly = layout.polygon, n = poly.length;
  const parts = [];
  for (const [a, b] of cells) {
    const centre = centres.get(key(a, b));
    if (!centre) continue;
    layout.sides.forEach(([da, db], k) => {
      if (inSet.has(key(a + da, b + db))) return;
      const [p, q] = [poly[k], poly[(k + 1) % n]];
      parts.push(`M${fx(centre[0] + p[0])} ${fx(centre[1] + p[1])}L${fx(centre[0] + q[0])} ${fx(centre[1] + q[1])}`);
    });
  }
  return parts.join("");
}

function drawBoard(s) {
  const custom = BOARDS[s.layout.shape];
  if (custom) {
    if (builtFor !== s.session.id) { layout = s.layout; custom.build(s.layout); builtFor = s.session.id; }
    cellNodes = custom.draw(s);
    return;
  }
  if (builtFor !== s.session.id) { buildBoard(s.layout); builtFor = s.session.id; }
  for (const [k, node] of cellNodes) node.dataset.colour = s.cells[k] || ".";
  const marks = document.getElementById("marks");
  marks.replaceChildren();
  for (const [a, b] of s.uncertain) {
    const centre = centres.get(key(a, b));
    if (!centre) continue;
    marks.append(svg("polygon", { points: points(...centre, 0.8), class: "unsure" }));
    const q = svg("text", { x: centre[0], y: centre[1] + 0.06, class: "unsure-text" });
    q.textContent = "?";
    marks.append(q);
  }
  if (s.last && s.last.cells.length) {
    marks.append(svg("path", { d: outline(s.last.cells), class: "last" }));
  }
  for (const alert of s.alerts) {
    for (const [a, b] of alert.cells) {
      const centre = centres.get(key(a, b));
      if (centre) marks.append(svg("polygon", { points: points(...centre, 1), class: "offending" }));
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
  return gameColourName(state ? state.session.game : null, colour);
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
  showForGame(s.session.game);
  drawAlerts(s);
  drawTurn(s);
  renderScores(document.getElementById("scores"), s.scores);
  drawHistory(s);
  const custom = BOARDS[s.layout.shape];
  const extra = document.getElementById("extra");
  if (custom && custom.panel) custom.panel(s, extra); else extra.replaceChildren();
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

function cellName(cell) {
  const custom = BOARDS[layout.shape];
  if (custom) return custom.name(cell);
  const [a, b] = cell;
  return layout.label.replace("{a}", a + layout.label_base).replace("{b}", b + layout.label_base);
}

document.getElementById("board").addEventListener("click", (event) => {
  const cell = event.target.closest(".cell");
  if (!cell || !state) return;
  pickedCell = cellValue(cell.dataset.cell);
  const custom = BOARDS[layout.shape];
  if (custom && custom.pick) { custom.pick(pickedCell); return; }
  document.getElementById("picker-cell").textContent = cellName(pickedCell);
  const choices = document.getElementById("choices");
  choices.replaceChildren(...layout.pickable.concat(["."]).map((code) =>
    el("button", { class: "choice", value: code, "data-colour": code, text: colourName(code) })));
  document.getElementById("picker").showModal();
});

document.getElementById("picker").addEventListener("close", (event) => {
  const colour = event.target.returnValue;
  if (!colour || !pickedCell) return;
  act("/api/correct", { cell: pickedCell, colour },
      `Corrected ${cellName(pickedCell)} to ${colourName(colour).toLowerCase()}`);
});

function askTakeBack(item) {
  const index = Number(item.dataset.index);
  const turn = state && state.history[index];
  if (!turn || turn.auto) return;
  pickedTurn = index;
  document.getElementById("takeback-what").textContent = `move ${index + 1}: ${moveName(turn)}`;
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

/* connect() is called by the page once every board's script is loaded. */
