/* Helpers shared by the pages: building elements, posting actions, short messages, and the
   game boards as the live and review pages draw them (with the picker a tapped cell opens). */
"use strict";

const COLOUR_NAMES = { B: "Blue", Y: "Yellow", R: "Red", G: "Green", C: "Clear", P: "Purple", ".": "Empty" };
const GAME_COLOUR_NAMES = { equilibrix: { B: "Black", W: "White" }, geometrius: { ".": "No chip" } };

/* Whether ``key`` is ``object``'s own (a name such as "constructor" is no prototype's key here);
   Object.hasOwn itself came with Chrome 93 and Safari 15.4, later than some tablets. */
function hasOwn(object, key) {
  return Object.prototype.hasOwnProperty.call(object, key);
}

/* A colour's name in a game (Equilibrix' B is black). Geometrius names its colours in words,
   the table's own, which may be any word: a chip called "C" is no Gemblo clear, and one called
   "constructor" no key of an object's prototype. */
function gameColourName(game, colour) {
  const own = (names) => (names && hasOwn(names, colour) ? names[colour] : undefined);
  const letters = game === "geometrius" ? undefined : COLOUR_NAMES;
  return own(GAME_COLOUR_NAMES[game]) || own(letters) || capitalise(colour);
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else if (key in node) node[key] = value;
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

/* An answer's JSON document; rejects with an Error in the user's words (and the HTTP
   ``status``) when the server refused (its one-line message) or when a 2xx answer is no JSON the
   browser can read: once a Geometrius reading's ``Infinity`` showed on the review page as
   "Cannot read properties of null". ``detail``: the whole error object, for answers that say
   more than a message (a 409's ``current``: what a cell holds now). */
async function answerOf(response) {
  let doc = null;
  try {
    doc = await response.json();
  } catch (err) {
    doc = null;
  }
  if (!response.ok) {
    const message = doc && doc.error ? doc.error.message : `the server answered ${response.status}`;
    throw Object.assign(new Error(message), { status: response.status, detail: doc && doc.error });
  }
  if (doc === null || typeof doc !== "object") {
    throw Object.assign(new Error("the referee's answer could not be read: reload the page and try again"),
                        { status: response.status });
  }
  return doc;
}

const UNREACHABLE = "the referee could not be reached: check the Wi-Fi and that the server runs";

/* GET or POST (``init``) to the server; resolves to its JSON, rejects as answerOf does (with no
   ``status`` when the server could not be reached). */
async function ask(url, init = {}) {
  let response;
  try {
    response = await fetch(url, init);
  } catch (err) {
    throw new Error(UNREACHABLE);
  }
  return answerOf(response);
}

/* POST ``body`` (JSON, or a form as it is) to the server, as ask. */
function post(url, body) {
  const init = { method: "POST", headers: {} };
  if (body instanceof FormData) {
    init.body = body;
  } else if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  return ask(url, init);
}

let toastTimer = null;
// An error just shown is not replaced by a success answered a moment later: a double tap's
// first tap answering after its second was refused must not hide why nothing more happened.
const ERROR_KEPT_MS = 2000;
let errorShownAt = -Infinity;

function toast(message, kind) {
  if (kind !== "error" && Date.now() - errorShownAt < ERROR_KEPT_MS) return;
  if (kind === "error") errorShownAt = Date.now();
  const box = document.getElementById("toast");
  box.textContent = message;
  box.dataset.kind = kind || "info";
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, kind === "error" ? 8000 : 3000);
}

function capitalise(text) {
  return text ? text[0].toUpperCase() + text.slice(1) : text;
}

function chip(colour) {
  const title = gameColourName(document.body.dataset.game, colour);
  return el("span", { class: "chip", "data-colour": paint(colour), "data-letter": chipLetter(colour), title });
}

/* The letter drawn in a colour's chip, so seats are told apart by more than hue: the colour's
   own letter (B, Y, R, G, C, P; Equilibrix' B and W), a Geometrius chip name's initial when no
   other chip name of the table starts with it (else none: a shared letter would mislead). */
function chipLetter(colour) {
  if (document.body.dataset.game !== "geometrius") return /^[A-Z]$/.test(colour) ? colour : null;
  const initial = (name) => String(name).trim().charAt(0).toUpperCase();
  const names = Object.keys((layout && layout.paint) || {});
  const mine = initial(colour);
  return mine && names.filter((name) => initial(name) === mine).length === 1 ? mine : null;
}

/* The colour a chip is drawn in: a Geometrius table may name its chips otherwise (the layout's
   ``paint`` gives each name's physical colour); any other colour is drawn as it is named. */
function paint(colour) {
  return (layout && layout.paint && hasOwn(layout.paint, colour) && layout.paint[colour]) || colour;
}

/* The scores JSON (contract) as table rows: place, player and colours, score, squares left. */
function renderScores(table, scores) {
  table.replaceChildren(el("thead", {}, el("tr", {},
    el("th", { text: "#" }), el("th", { text: "Player" }), el("th", { class: "num", text: "Score" }),
    el("th", { class: "num left", text: "Left", title: "pieces not placed" }))));
  const body = el("tbody");
  for (const p of scores.players) {
    body.append(el("tr", { "data-player": p.name },
      el("td", { class: "place", text: String(p.place) }),
      el("td", { class: "who", title: p.name }, p.colours.map(chip), el("span", { class: "name", text: p.name })),
      el("td", { class: "num score", text: String(p.score) }),
      el("td", { class: "num left", text: String(p.remaining.length) })));
  }
  table.append(body);
}

/* The scores' tiebreak steps (contract ``tiebreak``) as list items, as the review and the live
   page's finished game say them: equal points and a winner need the reason in words. */
function tiebreakItems(scores) {
  return scores.tiebreak.map((words) => el("li", { text: "Tiebreak: " + words }));
}

/* A game's ``variants`` ([code, [short name, description]] pairs) in ``select`` by their short
   names, the chosen one's description in words in ``about`` under it: a phone cut the long
   labels in the select ("Classic: four p…"). ``select`` keeps the description up to date. */
function offerVariants(select, about, variants) {
  const describe = () => {
    const chosen = variants.find(([code]) => code === select.value);
    about.textContent = chosen ? capitalise(chosen[1][1]) : "";
  };
  select.replaceChildren(...variants.map(([code, [name]]) => el("option", { value: code, text: name })));
  select.onchange = describe;  // one describer per select, whichever game's variants it offers
  describe();
}

/* A colour's name in the game on screen (the page sets body[data-game]). */
function colourName(colour) {
  return gameColourName(document.body.dataset.game || null, colour);
}

/* What a cell holds, in words to go inside a sentence (the review's conflicts, a screen
   reader's cell): "red", "empty", a Geometrius token "Q01 with red, blue". */
function contentName(content) {
  if (content && typeof content === "object") {
    const chips = content.stack.length ? content.stack.map((c) => colourName(c).toLowerCase()).join(", ") : "no chip";
    return `${content.shape || "a token not named yet"} with ${chips}`;
  }
  return colourName(content).toLowerCase();
}

/* ---- board ------------------------------------------------------------------------- */
/* One drawing for every board: the layout gives each cell's centre and the cell polygon
   (squares for Blokus, flat-topped hexes for Gemblo), with neighbouring centres 1 apart;
   flower.js and tokens.js draw the other boards. The live page draws a session's snapshot,
   the review page a photo's reading dressed as one: ``{session: {id}, layout, cells,
   uncertain, last, alerts}`` (plus ``geometrius``). */

const SVG = "http://www.w3.org/2000/svg";
let layout = null;       // the board's drawing (static per game, from the snapshot)
let builtFor = null;     // the session (or review) whose board is built
let cellNodes = new Map();  // "a,b" -> the cell's polygon
let centres = new Map(); // "a,b" -> [x, y]

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  return node;
}

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
  const hadFocus = Boolean(document.activeElement && document.activeElement.matches("#board .cell"));
  const custom = BOARDS[s.layout.shape];
  if (custom) {
    if (builtFor !== s.session.id) { layout = s.layout; custom.build(s.layout); builtFor = s.session.id; }
    cellNodes = custom.draw(s);
  } else {
    drawGrid(s);
  }
  boardDrawn(s, hadFocus);  // reach.js: the keyboard's cell and the magnifier follow the board
}

/* The square and hex boards: each cell's colour, the doubts, the last move, the alerts. */
function drawGrid(s) {
  if (builtFor !== s.session.id) { buildBoard(s.layout); builtFor = s.session.id; }
  for (const [k, node] of cellNodes) node.dataset.colour = s.cells[k] || ".";
  const marks = document.getElementById("marks");
  marks.replaceChildren();
  const ringClass = unsureClasses(s);
  for (const [a, b] of s.uncertain) {
    const centre = centres.get(key(a, b));
    if (!centre) continue;
    const kind = ringClass(key(a, b));
    marks.append(svg("polygon", { points: points(...centre, 0.8), class: kind, "data-of": key(a, b) }));
    markDoubt(marks, kind, centre[0], centre[1] + 0.06, "unsure-text");
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

/* The "?" inside an unsure cell's ring of class ``kind`` (every board shape marks its doubts
   alike), centred at (x, y); none inside a faint ring: a "?" on each of dozens of idle doubts
   is noise. */
function markDoubt(marks, kind, x, y, cls) {
  if (kind.includes("faint")) return;
  const q = svg("text", { x, y, class: cls });
  q.textContent = "?";
  marks.append(q);
}

/* The class of an unsure cell's ring, by its key: on the live page (whose snapshot lists the
   cells ``holding`` a change back) those rings are drawn strongly and the camera's other doubts
   faintly, since a sparse Gemblo board has dozens of doubts and only one or two a move waits
   on; the review page (no ``holding``) draws every doubt as one that needs a look. Every ring
   still sits on a cell the picker opens on (the marks take no taps). */
function unsureClasses(s) {
  if (!s.holding) return () => "unsure";
  const holding = new Set(s.holding.map(cellKey));
  return (k) => (holding.has(k) ? "unsure holding" : "unsure faint");
}

/* Ring the cells the user set themselves (``keys`` in the snapshot's cell forms): the review's
   corrections, the live page's corrections standing against the camera. A copy of each cell's
   own shape, drawn over it as a white ring with a dark dotted line: a shape, not a hue, so it
   reads on every piece colour and for colour-blind eyes, and unlike the hatched "?" of a
   doubt or the solid outline of the last move. Called after each drawBoard. */
function markCorrected(keys) {
  for (const old of document.querySelectorAll("#board .corrected, #board .corrected-halo")) old.remove();
  for (const k of keys) {
    const node = cellNodes.get(cellKey(k));
    if (!node) continue;
    for (const kind of ["corrected-halo", "corrected"]) ringOver(node, kind).dataset.of = cellKey(k);
  }
}

/* A copy of a cell's own shape drawn over it (after every cell, so no neighbour hides it) as a
   ring of class ``kind``: only its shape, no tap target, no name, no keyboard stop. */
function ringOver(node, kind) {
  const ring = node.cloneNode(false);
  for (const name of [...ring.getAttributeNames()]) {
    if (/^(data-|aria-|tabindex$|role$)/.test(name)) ring.removeAttribute(name);
  }
  ring.setAttribute("class", kind);
  node.parentNode.append(ring);
  return ring;
}

function cellName(cell) {
  const custom = BOARDS[layout.shape];
  if (custom) return custom.name(cell);
  const [a, b] = cell;
  return layout.label.replace("{a}", a + layout.label_base).replace("{b}", b + layout.label_base);
}

/* A sheet opened by Enter or Space (a move, a board cell) has its first button focused; the
   key held a moment repeats, and the repeat pressed that button ("Take it back", the first
   colour) unasked. A repeated Enter or Space on an open sheet's button does nothing. */
document.addEventListener("keydown", (event) => {
  if (event.repeat && (event.key === "Enter" || event.key === " ") && event.target.matches("dialog[open] button")) {
    event.preventDefault();
  }
});
