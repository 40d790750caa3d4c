/* How a player reaches one cell of the board (a Blokus or Gemblo cell, an Equilibrix field, a
   Geometrius token) to correct it, on the live and review pages:
   - a tap opens the cell's correction sheet (common.js' picker, or a board's own sheet);
   - for a finger on cells drawn smaller than MAGNIFY_BELOW_PX (a 20 x 20 board on a phone draws
     17 px squares, a fingertip covers two or three), the first tap opens the magnifier instead: the
     cells round the tap, copied from the board as drawn (no second drawing of any board) and
     shown at MAGNIFIED_PX each; a tap there opens that cell's sheet, Close returns to the board;
   - the keyboard: the board is one tab stop, the arrows move a ringed cell (on the hex board Up
     and Down go to the cell straight above or below, Left and Right to the upper and lower
     neighbours in turn, so the ring zigzags along a row), Enter or Space opens its sheet, and
     Escape closes the sheet with the focus back on the cell. The focused cell is named for a
     screen reader with what it holds ("row 3, column 5: red, uncertain"); the board's own
     svg is tabindex -1, or Chrome would stop on it too. */
"use strict";

const MAGNIFY_BELOW_PX = 28;  // a cell drawn smaller than this is magnified for a finger
const MAGNIFIED_PX = 48;      // a cell's size in the magnifier: over the 44 px a finger needs
const FINGER = window.matchMedia("(pointer: coarse)");  // a click that names no pointer (older Safari)
const ARROWS = { ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] };
const NOUNS = { flower: "field", tokens: "token" };  // the square and hex boards have cells

let pickedCell = null;  // the cell whose sheet is open
let focusKey = null;    // the board's one tab stop: the cell the arrows move
let arrowLine = null;   // {axis, at}: the row or column the arrows follow (the hex board's zigzag)
let refocus = null;     // the cell a sheet opened by the keyboard gives the focus back to
let magnified = null;   // {x, y, cell}: the magnifier's centre in board units and a cell's size
let drawnState = null;  // the snapshot the board shows, for the focused cell's name

const boardSvg = () => document.getElementById("board");

/* A drawn node's box in screen px: [centre x, centre y, width, height]. */
function screenBox(node) {
  const r = node.getBoundingClientRect();
  return [r.x + r.width / 2, r.y + r.height / 2, r.width, r.height];
}

/* ---- the correction sheet ------------------------------------------------------------ */

/* Opens the sheet that corrects cell ``k``; ``byKeyboard``: the focus comes back to it after. */
function openCorrection(k, byKeyboard) {
  if (!layout || !cellNodes.has(k)) return;
  pickedCell = cellValue(k);
  focusKey = k;
  arrowLine = null;
  refocus = byKeyboard ? k : null;
  const custom = BOARDS[layout.shape];
  if (custom && custom.pick) { custom.pick(pickedCell); return; }
  document.getElementById("picker-cell").textContent = cellName(pickedCell);
  const choices = document.getElementById("choices");
  choices.replaceChildren(...layout.pickable.concat(["."]).map((code) =>
    el("button", { class: "choice", value: code, "data-colour": code, text: colourName(code) })));
  document.getElementById("picker").showModal();
}

/* ---- the magnifier --------------------------------------------------------------------- */

/* The board's smallest cell as drawn, in screen px (its box's shorter side): every square or
   hex is as large as the others, while the Equilibrix flower's curved triangles are half its
   petals, and a finger aimed at a petal lands on a triangle beside it as easily. */
function smallestCellPx() {
  return Math.min(...[...cellNodes.values()].map((node) => Math.min(...screenBox(node).slice(2))));
}

/* Whether a tap is too coarse for the board: a finger (not a mouse) on cells drawn smaller than
   MAGNIFY_BELOW_PX. */
function tooSmallForAFinger(click) {
  const finger = click.pointerType ? click.pointerType === "touch" : FINGER.matches;  // a touch laptop's trackpad is no finger
  return finger && smallestCellPx() < MAGNIFY_BELOW_PX;
}

/* The magnifier opened round ``node``: its centre and the smallest cell's size kept in board
   units, so a new snapshot drawn meanwhile is copied into it at the same place. */
function magnify(node) {
  const [x, y] = screenBox(node);
  const toBoard = boardSvg().getScreenCTM().inverse();
  const centre = new DOMPoint(x, y).matrixTransform(toBoard);
  magnified = { x: centre.x, y: centre.y, cell: smallestCellPx() / boardSvg().getScreenCTM().a };
  document.getElementById("magnifier-what").textContent = NOUNS[layout.shape] || "cell";
  document.getElementById("magnifier").showModal();  // first: the view's size is known once shown
  drawMagnified();
}

/* The board's drawing copied into the magnifier, its view the cells round the tap at
   MAGNIFIED_PX each, kept inside the board (a corner's tap shows the corner's cells). */
function drawMagnified() {
  const view = document.getElementById("magnified");
  const copy = [...boardSvg().childNodes].map((node) => node.cloneNode(true));
  for (const node of copy) {
    if (node.nodeType !== Node.ELEMENT_NODE) continue;
    for (const inner of [node, ...node.querySelectorAll("*")]) {
      for (const name of ["id", "tabindex", "role", "aria-label"]) inner.removeAttribute(name);
    }
  }
  view.replaceChildren(...copy);
  view.dataset.shape = boardSvg().dataset.shape;
  const side = magnified.cell * view.clientWidth / MAGNIFIED_PX;
  const whole = boardSvg().viewBox.baseVal;
  const place = (centre, start, length) => (length <= side ? start + (length - side) / 2
    : Math.min(Math.max(centre - side / 2, start), start + length - side));
  view.setAttribute("viewBox", [place(magnified.x, whole.x, whole.width), place(magnified.y, whole.y, whole.height),
                                side, side].map(fx).join(" "));
}

/* ---- the keyboard ---------------------------------------------------------------------- */

/* The cell the arrow ``[ux, uy]`` goes to from cell ``from``: of the cells within 60 degrees
   of the arrow, the nearest, a cell straight ahead counting nearer than one aside; between
   two as near (the hex board's upper and lower neighbour), the one nearer the row or column
   the arrows follow. None at the board's edge. */
function nextCell(from, [ux, uy]) {
  const [x0, y0] = screenBox(cellNodes.get(from));
  const axis = ux ? "y" : "x";
  if (!arrowLine || arrowLine.axis !== axis) arrowLine = { axis, at: axis === "y" ? y0 : x0 };
  const found = [];
  for (const [k, node] of cellNodes) {
    const [x, y] = screenBox(node);
    const along = (x - x0) * ux + (y - y0) * uy, aside = (x - x0) * uy - (y - y0) * ux;
    if (k === from || along <= 0 || Math.abs(aside) >= along * Math.sqrt(3)) continue;
    const far = Math.hypot(along, aside) * (1 + Math.atan2(Math.abs(aside), along));
    found.push({ k, far, off: Math.abs((axis === "y" ? y : x) - arrowLine.at), first: axis === "y" ? y : x });
  }
  if (!found.length) return null;
  const nearest = Math.min(...found.map((f) => f.far));
  const ties = found.filter((f) => f.far <= nearest * 1.05);
  ties.sort((p, q) => p.off - q.off || p.first - q.first);
  return ties[0].k;
}

/* What cell ``k`` holds, in words for a screen reader: "red", "empty", "Q01 with red, blue". */
function holdsWords(s, k) {
  const custom = BOARDS[layout.shape];
  if (custom && custom.holds) return custom.holds(s, k);
  return contentName(s.cells[k] || ".");
}

/* Cell ``k`` made the board's tab stop, named, and ringed while the keyboard is on it. */
function makeTabStop(k, s) {
  for (const node of boardSvg().querySelectorAll("[tabindex]")) {
    for (const name of ["tabindex", "role", "aria-label"]) node.removeAttribute(name);
  }
  const node = cellNodes.get(k);
  if (!node) return null;
  focusKey = k;
  const unsure = s.uncertain.some((c) => cellKey(c) === k);
  node.setAttribute("tabindex", "0");
  node.setAttribute("role", "button");
  const words = `${capitalise(cellName(cellValue(k)))}: ${holdsWords(s, k)}`;
  node.setAttribute("aria-label", unsure ? `${words}, uncertain` : words);
  return node;
}

/* The keyboard's ring: a copy of the focused cell's shape (ringOver) lifted to the top of the
   board, over the doubts and alerts drawn on the cells, only while the focus came from the
   keyboard (a tap focuses too, and needs no ring). */
function ringFocus() {
  for (const old of boardSvg().querySelectorAll(".focus-ring, .focus-halo")) old.remove();
  const node = cellNodes.get(focusKey);
  if (!node || document.activeElement !== node || !node.matches(":focus-visible")) return;
  const toBoard = boardSvg().getScreenCTM().inverse().multiply(node.getScreenCTM());  // a token sits in a moved group
  for (const kind of ["focus-halo", "focus-ring"]) {
    const ring = ringOver(node, kind);
    const { a, b, c, d, e, f } = toBoard;
    ring.setAttribute("transform", `matrix(${[a, b, c, d, e, f].map(fx).join(" ")})`);
    boardSvg().append(ring);
  }
}

/* After each drawing (common.js drawBoard): the tab stop on its cell again (a board may draw
   new nodes), the focus kept if the board had it, the magnifier showing the new drawing. */
function boardDrawn(s, hadFocus) {
  const magnifier = document.getElementById("magnifier");
  if (drawnState && drawnState.session.id !== s.session.id && magnifier.open) magnifier.close();  // another game's board
  drawnState = s;
  if (!cellNodes.has(focusKey)) focusKey = cellNodes.keys().next().value;
  const node = makeTabStop(focusKey, s);
  if (hadFocus && node && document.activeElement !== node) node.focus({ preventScroll: true });
  ringFocus();
  if (magnifier.open) requestAnimationFrame(drawMagnified);  // after markCorrected
}
function moveFocus(arrow) {
  const k = nextCell(focusKey, arrow);
  if (k === null) return;
  makeTabStop(k, drawnState).focus();
  ringFocus();
}

/* ---- listening ------------------------------------------------------------------------- */

/* The board's taps, keys and sheets; the choice goes to ``correct(doc, done)``, which each
   page defines: the live page posts it to the session, the review page sets the photo's reading. */
function listenForCellTaps() {
  boardSvg().addEventListener("click", (event) => {
    const cell = event.target.closest(".cell");
    if (!cell || !layout) return;
    if (tooSmallForAFinger(event)) magnify(cell); else openCorrection(cell.dataset.cell, false);
  });
  boardSvg().addEventListener("keydown", (event) => {
    if (!layout || !focusKey || !event.target.matches(".cell")) return;  // a clicked svg keeps the page's keys
    if (hasOwn(ARROWS, event.key)) {
      moveFocus(ARROWS[event.key]);
    } else if (event.key === "Enter" || event.key === " ") {
      openCorrection(focusKey, true);
    } else {
      return;
    }
    event.preventDefault();  // no page scroll under the arrows and the space bar
  });
  boardSvg().addEventListener("focusin", ringFocus);
  boardSvg().addEventListener("focusout", () => requestAnimationFrame(ringFocus));

  const magnifier = document.getElementById("magnifier");
  magnifier.addEventListener("click", (event) => {
    const cell = event.target.closest("#magnified .cell");
    if (!cell) return;
    magnifier.close();
    openCorrection(cell.dataset.cell, false);
  });

  document.getElementById("picker").addEventListener("close", (event) => {
    const colour = event.target.returnValue;
    if (!colour || !pickedCell) return;
    correct({ cell: pickedCell, colour }, `Corrected ${cellName(pickedCell)} to ${colourName(colour).toLowerCase()}`);
  });
  for (const sheet of ["picker", "tokenfix"]) {
    document.getElementById(sheet).addEventListener("close", () => {
      const node = refocus && cellNodes.get(refocus);
      refocus = null;
      if (node) { node.focus(); ringFocus(); }
    });
  }
}
