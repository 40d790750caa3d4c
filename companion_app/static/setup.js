/* The setup page: the player rows follow the variant (who holds which colours), then the
   form is posted as a record-style setup document and the live page opens. */
"use strict";

const ORDER = ["B", "Y", "R", "G"];

/* [[default name, colours], ...] for a variant; the neutral colour sits out of three-player. */
function seats(variant, neutral) {
  if (variant === "team") return [["Blue & Red", ["B", "R"]], ["Yellow & Green", ["Y", "G"]]];
  if (variant === "two-player") return [["Player 1", ["B", "R"]], ["Player 2", ["Y", "G"]]];
  const colours = variant.startsWith("three-player") ? ORDER.filter((c) => c !== neutral) : ORDER;
  return colours.map((c) => [COLOUR_NAMES[c], [c]]);
}

const form = document.getElementById("setup");
const variant = document.getElementById("variant");
const neutral = document.getElementById("neutral");

function drawPlayers() {
  const three = variant.value.startsWith("three-player");
  document.getElementById("neutral-field").hidden = !three;
  const box = document.getElementById("players");
  const typed = [...box.querySelectorAll("input")].map((i) => i.value);
  box.replaceChildren(...seats(variant.value, neutral.value).map(([name, colours], i) =>
    el("label", { class: "player", "data-colours": colours.join("") },
      el("span", { class: "chips" }, colours.map(chip)),
      el("input", { type: "text", name: `player${i}`, placeholder: name, value: typed[i] || "", maxLength: 40,
                    "aria-label": `Name for ${colours.map((c) => COLOUR_NAMES[c]).join(" and ")}` }))));
}

variant.addEventListener("change", drawPlayers);
neutral.addEventListener("change", drawPlayers);

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const error = document.getElementById("setup-error");
  error.hidden = true;
  const players = [...document.querySelectorAll("#players .player")].map((row) => {
    const input = row.querySelector("input");
    return { name: input.value.trim() || input.placeholder, colours: row.dataset.colours.split("") };
  });
  const doc = {
    game: document.getElementById("game").value,
    variant: variant.value,
    players,
    settings: { fixed_corners: document.getElementById("fixed_corners").checked, neutral: neutral.value },
  };
  try {
    await post("/api/session", doc);
    window.location.assign("/live");
  } catch (err) {
    error.textContent = capitalise(err.message);
    error.hidden = false;
  }
});

drawPlayers();
