/* The setup page: the game picks its variants and settings; the player rows follow the
   game's own default seats (asked from the server, which knows every game's rules); each
   seat's colours can be changed. The form is posted as a record-style setup document. */
"use strict";

const CHOICES = JSON.parse(document.getElementById("choices").textContent);
const form = document.getElementById("setup");
const game = document.getElementById("game");
const variant = document.getElementById("variant");
const start = form.querySelector("button[type=submit]");
let asked = 0;  // the latest seats request: older answers are dropped

function drawVariants() {
  variant.replaceChildren(...CHOICES[game.value].variants.map(([code, label]) =>
    el("option", { value: code, text: label })));
}

/* Settings fields belong to a game and maybe to some of its variants (data-game, data-variants). */
function showSettings() {
  for (const field of form.querySelectorAll("[data-game]")) {
    const variants = field.dataset.variants;
    field.hidden = field.dataset.game !== game.value || (variants && !variants.split(" ").includes(variant.value));
  }
}

function settings() {
  const out = {};
  for (const input of form.querySelectorAll("[data-setting]")) {
    if (input.closest("[data-game]").hidden) continue;
    out[input.dataset.setting] = input.type === "checkbox" ? input.checked : input.value;
  }
  return out;
}

function colourSelect(colour) {
  const select = el("select", { class: "colour", "data-colour": colour, "aria-label": "Colour" },
    CHOICES[game.value].colours.map((c) => el("option", { value: c, text: CHOICES[game.value].names[c] || c,
                                                           selected: c === colour })));
  select.addEventListener("change", () => { select.dataset.colour = select.value; });
  return select;
}

async function drawPlayers() {
  document.body.dataset.game = game.value;
  showSettings();
  start.disabled = true;
  const mine = ++asked;
  let seats;
  try {
    ({ seats } = await post("/api/seats", { game: game.value, variant: variant.value, settings: settings(),
                                            count: Number(document.getElementById("count").value) }));
  } catch (err) {
    toast(capitalise(err.message), "error");
    return;
  }
  if (mine !== asked) return;
  const box = document.getElementById("players");
  const typed = [...box.querySelectorAll("input")].map((i) => i.value);
  box.replaceChildren(...seats.map(({ name, colours }, i) =>
    el("div", { class: "player" },
      el("span", { class: "chips" }, colours.map(colourSelect)),
      el("input", { type: "text", name: `player${i}`, placeholder: name, value: typed[i] || "", maxLength: 40,
                    "aria-label": `Name of player ${i + 1}` }))));
  start.disabled = false;
}

game.addEventListener("change", () => { drawVariants(); drawPlayers(); });
document.getElementById("count").addEventListener("change", drawPlayers);
variant.addEventListener("change", drawPlayers);
document.getElementById("neutral").addEventListener("change", drawPlayers);

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const error = document.getElementById("setup-error");
  error.hidden = true;
  const players = [...document.querySelectorAll("#players .player")].map((row) => {
    const input = row.querySelector("input");
    return { name: input.value.trim() || input.placeholder,
             colours: [...row.querySelectorAll("select.colour")].map((s) => s.value) };
  });
  const doc = { game: game.value, variant: variant.value, players, settings: settings() };
  try {
    await post("/api/session", doc);
    window.location.assign("/live");
  } catch (err) {
    error.textContent = capitalise(err.message);
    error.hidden = false;
  }
});

drawVariants();
drawPlayers();
