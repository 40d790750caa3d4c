/* Geometrius on the live page: the token field (squares at their grid places, each with its
   polygon and its chip stack), and card tapping. For every chip a turn put down, the player
   taps the card played; the page says at once whether the card fits the token (the
   catalogue's own list of the tokens each card accepts), then the server judges the turn.
   The review page draws a photo's token field with it too (no turns there, so no cards). */
"use strict";

(function () {
  const STEP = 1.15;        // token pitch: a token is 1 wide
  let lay = null;
  let nodes = new Map();    // "r,c" -> the token's square
  let picking = null;       // {event, token, need, cards}: the slot whose cards are being tapped
  const fits = (card, shape) => { const c = lay.cards.find((x) => x.id === card); return Boolean(c && c.matches.includes(shape)); };
  const placeName = ([r, c]) => `row ${r}, column ${c}`;

  function build(l) {
    lay = l;
    document.getElementById("board").dataset.shape = "tokens";
    const dialog = document.getElementById("cardpicker");
    if (!dialog) return;  // the review page: a photo has no turns to tap cards for
    document.getElementById("cards").replaceChildren(...l.cards.map((c) =>
      el("button", { type: "button", class: "card-choice", "data-card": c.id },
         el("b", { text: c.id }), " ", c.text)));
    dialog.addEventListener("click", onCard);
    // The camera may see one chip of a block (the other hidden or misread): the player says
    // it was a block by tapping its two cards. A block said by mistake is one chip again by
    // one card (a block the camera saw whole keeps its two chips whatever the cards).
    document.getElementById("card-block").addEventListener("click", () => {
      if (!picking || picking.cards.length) return;
      picking.need = 3 - picking.need;
      document.getElementById("card-block").hidden = true;
    });
  }

  function draw(s) {
    const board = document.getElementById("board");
    const g = s.geometrius;
    board.replaceChildren();
    nodes = new Map();
    if (g.waiting && !g.tokens.length) {
      board.setAttribute("viewBox", "0 0 4.6 4.6");
      const t = svg("text", { x: 2.3, y: 2.3, class: "waiting-text" });
      t.textContent = "Lay out the 4 × 4 field";
      board.append(t);
      return nodes;
    }
    const rows = g.tokens.map((t) => t.row), cols = g.tokens.map((t) => t.col);
    const r0 = Math.min(...rows), c0 = Math.min(...cols);
    const w = (Math.max(...cols) - c0 + 1) * STEP + 0.3, h = (Math.max(...rows) - r0 + 1) * STEP + 0.3;
    const side = Math.max(w, h);
    board.setAttribute("viewBox", `${fx(c0 * STEP - 0.15 - (side - w) / 2)} ${fx(r0 * STEP - 0.15 - (side - h) / 2)} ${fx(side)} ${fx(side)}`);
    const defs = hatchDefs(0.12);
    const cells = svg("g", { class: "cells" });
    for (const t of g.tokens) {
      const x = t.col * STEP, y = t.row * STEP;
      const group = svg("g", { class: "token", transform: `translate(${fx(x)} ${fx(y)})` });
      const square = svg("rect", { width: 1, height: 1, rx: 0.08, class: "cell token-face", "data-cell": `${t.row},${t.col}`,
                                   "data-shape": t.shape, "data-blocked": t.blocked ? "yes" : "no" });
      const shape = lay.shapes[t.shape];  // none: a token of the starting field the camera cannot read
      const label = svg("text", { x: 0.06, y: 0.95, class: "token-id" });
      label.textContent = shape ? t.shape + (shape.star ? " ★" : "") : "? tap to name it";
      group.append(square, label);
      if (shape) {
        group.append(svg("polygon", { class: "token-polygon", points: shape.vertices.map(([px, py]) =>
          `${fx(0.12 + px * 0.62)},${fx(0.12 + py * 0.62)}`).join(" ") }));
      }
      t.stack.forEach((colour, k) => group.append(svg("circle", { cx: 0.86, cy: fx(0.86 - k * 0.16), r: 0.09,
                                                                  class: "stone", "data-colour": paint(colour) })));
      if (t.blocked) group.append(svg("path", { d: "M0.05 0.05L0.3 0.05L0.05 0.3Z", class: "blocked-mark" }));
      cells.append(group);
      nodes.set(`${t.row},${t.col}`, square);
    }
    const marks = svg("g", { class: "marks", id: "marks" });
    const box = ([r, c], cls) => svg("rect", { x: fx(c * STEP - 0.04), y: fx(r * STEP - 0.04), width: 1.08, height: 1.08,
                                               rx: 0.1, class: cls });
    for (const p of s.uncertain) marks.append(box(p, "unsure"));
    if (s.last) for (const p of s.last.cells) marks.append(box(p, "last token-last"));
    for (const a of s.alerts) for (const p of a.cells) if (Array.isArray(p)) marks.append(box(p, "offending"));
    board.append(defs, cells, marks);
    return nodes;
  }

  /* The turns' chips and the cards tapped for them, newest first; untapped ones ask for a card. */
  function panel(s, box) {
    const g = s.geometrius;
    if (g.waiting) {
      const text = g.tokens.length ? "The camera cannot read every token of the starting field: tap each “?” to name it."
                                   : "Waiting for the camera to see the 16 tokens of the starting field.";
      box.replaceChildren(el("p", { class: "hint", id: "waiting-hint", text }));
      return;
    }
    const rows = [];
    for (const turn of g.turns.slice().reverse()) {
      for (const slot of turn.slots) {
        const verdicts = slot.cards.map((card, k) => el("span", { class: slot.fits[k] ? "fit ok" : "fit bad",
          text: `${card} ${slot.fits[k] ? "✓ fits" : "✗ does not fit"} ${slot.token}` }));
        const need = slot.chips - slot.cards.length;
        rows.push(el("li", { class: "slot", "data-event": turn.event, "data-token": slot.token },
          chip(turn.colour),
          el("span", { class: "what", text: ` move ${turn.index + 1}: ${slot.chips} chip${slot.chips > 1 ? "s" : ""} on ${slot.token}` +
                                            (slot.at ? ` (${placeName(slot.at)})` : "") }),
          ...verdicts,
          el("button", { type: "button", class: need > 0 ? "primary tap-card" : "secondary tap-card",
                         "data-event": turn.event, "data-token": slot.token, "data-chips": slot.chips,
                         text: need > 0 ? "Tap the card played" : "Change card" })));
      }
    }
    const left = Object.entries(g.turns_left).map(([c, n]) => el("span", { class: "holding" }, chip(c), ` ${n} turn${n === 1 ? "" : "s"} left`));
    box.replaceChildren(el("h2", { text: "Cards played" }), el("p", { class: "holdings" }, ...left),
                        rows.length ? el("ol", { class: "slots", id: "slots" }, rows)
                                    : el("p", { class: "hint", text: "No chip placed yet." }));
  }

  const extra = document.getElementById("extra");  // the live page's turns (none on the review page)
  if (extra) extra.addEventListener("click", (event) => {
    const button = event.target.closest(".tap-card");
    if (!button) return;
    // One card per chip, two at most (a block): more chips on one token break G6 whatever the cards.
    picking = { event: Number(button.dataset.event), token: button.dataset.token,
                need: Math.min(2, Number(button.dataset.chips)), cards: [] };
    document.getElementById("card-token").textContent = picking.token;
    const block = document.getElementById("card-block");
    block.hidden = false;
    block.textContent = picking.need === 1 ? "It was a block: two cards" : "It was one chip: one card";
    document.getElementById("card-verdict").replaceChildren();
    document.getElementById("cardpicker").showModal();
  });

  /* A card tapped: the verdict at once, then the turn is judged again on the server. */
  function onCard(event) {
    const button = event.target.closest(".card-choice");
    if (!button || !picking) return;
    const card = button.dataset.card;
    picking.cards.push(card);
    const ok = fits(card, picking.token);
    document.getElementById("card-verdict").append(el("p", { class: ok ? "fit ok" : "fit bad",
      text: `${card} ${ok ? "✓ fits" : "✗ does not fit"} ${picking.token}` }));
    if (picking.cards.length < picking.need) return;  // a block: two cards
    const done = picking;
    picking = null;
    setTimeout(() => document.getElementById("cardpicker").close(), 600);
    act("/api/amend", { event: done.event, token: done.token, cards: done.cards },
        done.cards.map((c) => `${c} ${fits(c, done.token) ? "fits" : "does not fit"} ${done.token}`).join("; "));
  }

  /* Tapping a token: correct its top chip or its shape. */
  function pick(place) {
    const token = state.geometrius.tokens.find((t) => t.row === place[0] && t.col === place[1]);
    if (!token) return;
    document.getElementById("fix-where").textContent = `${token.shape || "the token"} (${placeName(place)})`;
    const tops = document.getElementById("fix-tops");
    document.getElementById("fix-top-part").hidden = state.geometrius.waiting;  // no chips before the game
    tops.replaceChildren(...state.players.map((p) => p.colours[0]).concat(["."]).map((c) =>
      el("button", { type: "button", class: "choice", "data-colour": paint(c), "data-top": c, text: colourName(c) })));
    const shape = document.getElementById("fix-shape");
    shape.replaceChildren(...Object.keys(lay.shapes).map((id) => el("option", { value: id, text: id, selected: id === token.shape })));
    document.getElementById("tokenfix").dataset.at = place.join(",");
    document.getElementById("tokenfix").showModal();
  }

  const fix = document.getElementById("tokenfix");
  fix.addEventListener("click", (event) => {
    const at = fix.dataset.at.split(",").map(Number);
    const top = event.target.closest("[data-top]");
    if (top) {
      fix.close();
      correct({ at, top: top.dataset.top }, `Top chip at ${placeName(at)}: ${colourName(top.dataset.top).toLowerCase()}`);
    } else if (event.target.id === "fix-shape-save") {
      fix.close();
      const shape = document.getElementById("fix-shape").value;
      correct({ at, shape }, `The token at ${placeName(at)} is ${shape}`);
    }
  });

  /* What the token at ``k`` holds, in words for a screen reader (reach.js): its shape, its chips. */
  function holds(s, k) {
    const t = s.geometrius.tokens.find((x) => `${x.row},${x.col}` === k);
    return t ? contentName(t) : "no token";
  }

  BOARDS.tokens = { build, draw, panel, pick, holds, name: placeName };
})();
