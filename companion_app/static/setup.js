/* The setup page: the game picks its variants and settings; the player rows follow the
   game's own default seats (asked from the server, which knows every game's rules, and which
   says what each colour a seat may take is called: a Geometrius table names its chips); each
   seat's colours can be changed. The form is posted as a record-style setup document, and
   every refusal (a bad chip name included) is shown in words under the form. */
"use strict";

const CHOICES = JSON.parse(document.getElementById("choices").textContent);
const form = document.getElementById("setup");
const game = document.getElementById("game");
const variant = document.getElementById("variant");
const start = form.querySelector("button[type=submit]");
let asked = 0;  // the latest seats request: older answers are dropped
let drawing = Promise.resolve();  // the latest seats request's drawing: a submit waits for it

function drawVariants() {
  offerVariants(variant, document.getElementById("variant-about"), CHOICES[game.value].variants);
}

/* Settings fields belong to a game and maybe to some of its variants (data-game, data-variants). */
function showSettings() {
  for (const field of form.querySelectorAll("[data-game]")) {
    const variants = field.dataset.variants;
    field.hidden = field.dataset.game !== game.value || (variants && !variants.split(" ").includes(variant.value));
  }
}

/* The shown settings as the record's "settings"; inputs marked data-list make one list
   (Geometrius' six chip names, trimmed: a tablet keyboard's trailing space is no part of a name). */
function settings() {
  const out = {};
  for (const input of form.querySelectorAll("[data-setting]")) {
    if (input.closest("[data-game]").hidden) continue;
    const key = input.dataset.setting;
    if (input.dataset.list !== undefined) out[key] = [...(out[key] || []), input.value.trim()];
    else out[key] = input.type === "checkbox" ? input.checked : input.value;
  }
  return out;
}

/* The chip a Geometrius colour name stands for (a select is drawn in it); other games' colours
   are drawn as they are named. */
function chipOf(colour) {
  if (game.value !== "geometrius") return colour;  // a Geometrius name ("B") is no other game's colour
  const named = [...form.querySelectorAll("input[data-chip]")].find((i) => i.value.trim() === colour);
  return named ? named.dataset.chip : colour;
}

/* A seat's colour, chosen among ``colours`` ([colour, name] pairs from the server). */
function colourSelect(colour, colours) {
  const select = el("select", { class: "colour", "data-colour": chipOf(colour), "aria-label": "Colour" },
    colours.map(([c, name]) => el("option", { value: c, text: name, selected: c === colour })));
  select.addEventListener("change", () => { select.dataset.colour = chipOf(select.value); });
  return select;
}

function showError(message) {
  const error = document.getElementById("setup-error");
  error.textContent = message ? capitalise(message) : "";
  error.hidden = !message;
}

/* The seats again, for the setup as it is now. The start button is not disabled meanwhile: a
   tap on it blurs a chip name just typed, whose change asks again, and a button disabled
   under the finger would lose the tap; the submit waits for this drawing instead. */
function redraw() {
  drawing = drawPlayers();
}

async function drawPlayers() {
  document.body.dataset.game = game.value;
  showSettings();
  const mine = ++asked;
  let seats, colours;
  try {
    ({ seats, colours } = await post("/api/seats", { game: game.value, variant: variant.value, settings: settings(),
                                                     count: Number(document.getElementById("count").value) }));
  } catch (err) {
    if (mine === asked) {
      showError(err.message);
      start.disabled = true;  // the setup as it is cannot start: the error says why
    }
    return;
  }
  if (mine !== asked) return;
  showError(null);
  const box = document.getElementById("players");
  const typed = [...box.querySelectorAll("input")].map((i) => i.value);
  box.replaceChildren(...seats.map(({ name, colours: seat }, i) =>
    el("div", { class: "player" },
      el("span", { class: "chips" }, seat.map((c) => colourSelect(c, colours))),
      el("input", { type: "text", name: `player${i}`, placeholder: name, value: typed[i] || "", maxLength: 40,
                    "aria-label": `Name of player ${i + 1}` }))));
  start.disabled = false;
}

game.addEventListener("change", () => { drawVariants(); redraw(); });
document.getElementById("count").addEventListener("change", redraw);
variant.addEventListener("change", redraw);
document.getElementById("neutral").addEventListener("change", redraw);
for (const input of form.querySelectorAll("input[data-chip]")) input.addEventListener("change", redraw);

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  await drawing;  // the seats of the setup as it is now (a chip name may have just been changed)
  if (start.disabled) return;  // refused: the error shows why
  showError(null);
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
    showError(err.message);
  }
});

drawVariants();
redraw();
