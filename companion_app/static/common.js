/* Helpers shared by the pages: building elements, posting actions, short messages. */
"use strict";

const COLOUR_NAMES = { B: "Blue", Y: "Yellow", R: "Red", G: "Green", C: "Clear", P: "Purple", ".": "Empty" };
const GAME_COLOUR_NAMES = { equilibrix: { B: "Black", W: "White" }, geometrius: { ".": "No chip" } };

/* A colour's name in a game (Equilibrix' B is black; Geometrius names its colours in words). */
function gameColourName(game, colour) {
  return (GAME_COLOUR_NAMES[game] || {})[colour] || COLOUR_NAMES[colour] || capitalise(colour);
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

/* POST to the server; resolves to its JSON, rejects with an Error carrying its message. */
async function post(url, body) {
  const init = { method: "POST", headers: {} };
  if (body instanceof FormData) {
    init.body = body;
  } else if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(url, init);
  } catch (err) {
    throw new Error("the referee could not be reached: check the Wi-Fi and that the server runs");
  }
  let doc = null;
  try {
    doc = await response.json();
  } catch (err) {
    doc = null;
  }
  if (!response.ok) {
    const message = doc && doc.error ? doc.error.message : `the server answered ${response.status}`;
    throw new Error(message);
  }
  return doc;
}

let toastTimer = null;
function toast(message, kind) {
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
  return el("span", { class: "chip", "data-colour": colour, title: gameColourName(document.body.dataset.game, colour) });
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
