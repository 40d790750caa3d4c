/* The review page: upload a photo of a finished board, show what was read and the scores.
   Size and type are checked here for a quick answer and again by the server, which decides. */
"use strict";

const reviewForm = document.getElementById("review");
const maxBytes = Number(reviewForm.dataset.maxMb) * 1024 * 1024;
const VARIANTS = JSON.parse(document.getElementById("variants").textContent);
const reviewGame = document.getElementById("review-game");

/* Each game has its own variants: the list follows the game chosen. */
reviewGame.addEventListener("change", () => {
  document.getElementById("review-variant").replaceChildren(...(VARIANTS[reviewGame.value] || []).map(
    ([code, label]) => el("option", { value: code, text: label })));
});

function showError(message) {
  const box = document.getElementById("review-error");
  box.textContent = capitalise(message);
  box.hidden = !message;
}

function showResult(doc) {
  const result = doc.result;
  document.body.dataset.game = reviewGame.value;  // the game's colour names and columns
  const shots = document.getElementById("shots");
  const captions = { overlay: "What was read", rectified: "The board, straightened" };
  const order = (name) => (name in captions ? Object.keys(captions).indexOf(name) : 9);
  const images = Object.entries(doc.images).sort(([a], [b]) => order(a) - order(b));
  shots.replaceChildren(...images.map(([name, url]) =>
    el("figure", { class: "shot" }, el("img", { src: url, alt: captions[name] || name }),
       el("figcaption", { text: captions[name] || name }))));
  renderScores(document.getElementById("review-scores"), result);
  const notes = [
    ...result.flags.map((f) => el("li", { class: "flag" }, el("span", { class: "rule", text: f.rule }), " " + capitalise(f.message))),
    ...result.undecided.map((u) => el("li", { class: "undecided" }, el("span", { class: "rule", text: u.rule }), " " + capitalise(u.message))),
    ...result.tiebreak.map((words) => el("li", { text: "Tiebreak: " + words })),
  ];
  if (result.uncertain && result.uncertain.length) {
    notes.push(el("li", { class: "flag", text: `${result.uncertain.length} square(s) could not be read with confidence: check them on the board.` }));
  }
  document.getElementById("review-notes").replaceChildren(...notes);
  const section = document.getElementById("review-result");
  section.hidden = false;
  section.scrollIntoView({ behavior: "smooth", block: "start" });
}

reviewForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  showError("");
  document.getElementById("review-result").hidden = true;
  const file = document.getElementById("photo").files[0];
  if (!file) { showError("choose a photo of the finished board first"); return; }
  if (file.size > maxBytes) {
    showError(`that file is larger than ${reviewForm.dataset.maxMb} MB: take the photo at a lower resolution`);
    return;
  }
  const button = document.getElementById("review-go");
  button.disabled = true;
  button.textContent = "Reading the photo…";
  try {
    showResult(await post("/api/review", new FormData(reviewForm)));
  } catch (err) {
    showError(err.message);
  } finally {
    button.disabled = false;
    button.textContent = "Score the photo";
  }
});
