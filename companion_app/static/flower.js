/* Equilibrix on the live page: the Flower-of-Life board (a path per petal and curved
   triangle, from the layout), the ring with the Origin and the tiles offered, the 5+1 tokens
   and mini-tiles; a move's ring tile and 5+1 token are entered on its sheet. */
"use strict";

(function () {
  let fields = new Map();   // field id -> its path
  let paths = new Map();    // field id -> the path's d
  let centres = new Map();  // field id -> its centroid [x, y]
  let lay = null;

  function build(l) {
    lay = l;
    const board = document.getElementById("board");
    const reach = l.radius + 0.9;
    board.setAttribute("viewBox", `${-reach} ${-reach} ${2 * reach} ${2 * reach}`);
    board.dataset.shape = "flower";
    board.replaceChildren();
    const defs = hatchDefs(0.25);
    const back = svg("circle", { cx: 0, cy: 0, r: l.radius + 0.55, class: "flower-back" });
    const cells = svg("g", { class: "cells" });
    fields = new Map(); paths = new Map(); centres = new Map();
    for (const [id, d, x, y] of l.fields) {
      const node = svg("path", { d, class: "cell field", "data-cell": id, "data-colour": "." });
      const title = svg("title");
      title.textContent = `field ${id}`;
      node.append(title);
      cells.append(node);
      fields.set(id, node); paths.set(id, d); centres.set(id, [x, y]);
    }
    const dots = svg("g", { class: "nodes" });
    for (const [, , x, y] of l.nodes) dots.append(svg("circle", { cx: x, cy: y, r: 0.07, class: "node" }));
    for (const [q, s, colour] of l.markers) {
      const [, , x, y] = l.nodes.find(([a, b]) => a === q && b === s);
      dots.append(svg("circle", { cx: x, cy: y, r: 0.22, class: "marker", "data-colour": colour }));
    }
    board.append(defs, back, cells, dots, svg("g", { class: "marks", id: "marks" }));
  }

  function draw(s) {
    for (const [id, node] of fields) node.dataset.colour = s.cells[id] || ".";
    const marks = document.getElementById("marks");
    marks.replaceChildren();
    const ringClass = unsureClasses(s);
    for (const id of s.uncertain) {
      if (!paths.has(id)) continue;
      const kind = ringClass(id);
      marks.append(svg("path", { d: paths.get(id), class: kind, "data-of": id }));
      markDoubt(marks, kind, ...centres.get(id), "unsure-text field-text");
    }
    if (s.last) {
      for (const id of s.last.cells) if (paths.has(id)) marks.append(svg("path", { d: paths.get(id), class: "last field-last" }));
    }
    for (const alert of s.alerts) {
      for (const id of alert.cells) if (paths.has(id)) marks.append(svg("path", { d: paths.get(id), class: "offending" }));
      for (const id of alert.piece_cells) if (paths.has(id)) marks.append(svg("path", { d: paths.get(id), class: "illegal field-illegal" }));
    }
    return fields;
  }

  /* The ring clockwise from the Origin, the tiles the player to move may take marked. */
  function panel(s, box) {
    const e = s.equilibrix;
    const n = e.ring.length;
    const slots = [];
    for (let k = 0; k < n; k++) {
      const i = (e.origin + k) % n;
      const tile = e.ring[i];
      slots.push(el("li", { class: tile ? (e.offered.includes(tile) ? "tile offered" : "tile") : "tile gone",
                            "data-tile": tile || "", title: tile ? `${tile} (${e.shapes[tile]})` : "taken" },
                   tile ? e.shapes[tile] : "·"));
    }
    const who = (c) => colourName(c);
    const kombo = s.kombo ? komboPanel(s) : [];
    box.replaceChildren(
      el("h2", { text: `${e.variant_name}` + (s.kombo ? ` · KOMBO game ${s.kombo.games.length + 1}` : "") }),
      ...kombo,
      el("p", { class: "hint", text: "Ring, clockwise from the Origin ▸ (offered tiles framed):" }),
      el("ol", { class: "ring", id: "ring" }, el("li", { class: "origin", text: "▸", title: "the Origin" }), slots),
      el("p", { class: "holdings", id: "holdings" },
         ...Object.keys(e.tokens).map((c) => el("span", { class: "holding" }, chip(c),
           ` ${who(c)}: 5+1 token ×${e.tokens[c]}, mini-tiles left ${e.mini_turns_left[c]} (${e.minis[c].join(", ") || "none"})`))),
    );
  }

  const VARIANT_NAMES = { zdrzovacka: "ZDRŽOVAČKA", autonomie: "AUTONOMIE", "tri-mety": "TŘI METY" };

  /* KOMBO: the wins so far; when a game is won, the loser picks the next variant. */
  function komboPanel(s) {
    const k = s.kombo;
    const out = [el("p", { class: "holdings", id: "kombo" },
      ...Object.entries(k.wins).map(([c, n]) => el("span", { class: "holding" }, chip(c), ` ${colourName(c)}: ${n} win${n === 1 ? "" : "s"}`)))];
    if (k.champion) {
      out.push(el("p", { class: "turn", text: `${colourName(k.champion)} wins KOMBO` }));
    } else if (s.game_over && k.winner_now) {
      // The panel is drawn again for every new state (the camera's status as the table is
      // cleared, an alert dismissed): the loser's pick is kept, or the next game would start
      // in the first variant listed whatever was picked.
      const picked = document.getElementById("kombo-variant");
      const kept = picked ? picked.value : null;
      const pick = el("select", { id: "kombo-variant", "aria-label": "Next variant" },
        Object.entries(VARIANT_NAMES).filter(([v]) => v !== s.session.variant)
          .map(([v, n]) => el("option", { value: v, text: n, selected: v === kept })));
      const go = el("button", { type: "button", class: "primary", id: "kombo-next", text: "Start the next KOMBO game" });
      go.addEventListener("click", () => act("/api/kombo/next", { variant: pick.value }, "Next KOMBO game started"));
      out.push(el("label", { class: "field" }, `${colourName(k.winner_now === "B" ? "W" : "B")} picks the next variant`, pick), go);
    }
    return out;
  }

  /* A move's sheet: which ring tile it was, and whether the 5+1 token came with it. */
  function details(s, turn, box) {
    if (turn.pass || turn.event === null) { box.replaceChildren(); return; }
    const select = el("select", { id: "amend-tile", "aria-label": "Ring tile" },
      el("option", { value: "", text: "as the shape says" }),
      Object.keys(s.equilibrix.shapes).map((t) => el("option", { value: t, text: `${t} (${s.equilibrix.shapes[t]})`,
                                                                 selected: t === turn.piece })));
    const token = el("input", { type: "checkbox", id: "amend-token" });
    const move = s.history[turn.index];
    token.checked = Boolean(move && move.token);
    const apply = el("button", { type: "button", class: "primary", id: "amend-apply", text: "Save tile and token" });
    const shown = select.value;  // the tile judged now: often a guess from the shape
    apply.addEventListener("click", () => {
      document.getElementById("takeback").close();
      // The tile is sent only when changed: sending the guess back would fix it for good, and
      // a take-back or correction earlier in the game could no longer re-decide it.
      const doc = { event: turn.event, token: token.checked };
      if (select.value !== shown) doc.tile = select.value || null;
      act("/api/amend", doc, `Move ${turn.index + 1} updated`);
    });
    box.replaceChildren(
      el("label", { class: "field" }, "Ring tile", select),
      el("label", { class: "check" }, token, " The 5+1 token was played with it"),
      apply);
  }

  BOARDS.flower = { build, draw, panel, details, name: (id) => `field ${id}` };
})();
