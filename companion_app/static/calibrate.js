/* Calibration page: a refreshed camera view with the fitted grid, four taps to set the corners,
   saving the board position and learning the colours. The server draws the grid; this only
   swaps frames, collects taps (as shares of the image, so any display size works) and
   shows the status. */
"use strict";

const REFRESH_MS = 500;
const RETRY_MS = 3000;

const view = document.getElementById("view");
const frame = document.getElementById("frame");
const waiting = document.getElementById("waiting");
const prompt = document.getElementById("prompt");
const errorBox = document.getElementById("cal-error");
const buttons = {
  find: document.getElementById("find"),
  tap: document.getElementById("tap"),
  save: document.getElementById("save"),
  learn: document.getElementById("learn"),
};
const PROMPT = prompt.textContent;
let taps = null; // [[x, y], ...] shares of the image while tapping, else null

/* Load the next frame off-screen and swap it in, so the view never flickers or goes blank. */
function refresh() {
  const next = new Image();
  next.onload = () => {
    frame.src = next.src;
    frame.hidden = false;
    waiting.hidden = true;
    setTimeout(refresh, REFRESH_MS);
  };
  next.onerror = async () => {
    waiting.textContent = await frameProblem();
    waiting.hidden = false;
    frame.hidden = true;
    setTimeout(refresh, RETRY_MS);
  };
  next.src = `/calibrate/frame.jpg?t=${Date.now()}`;
}

async function frameProblem() {
  try {
    const response = await fetch("/calibrate/frame.jpg");
    const doc = await response.json();
    return doc.error.message;
  } catch (err) {
    return UNREACHABLE;
  }
}

function showStatus(st) {
  document.getElementById("st-camera").textContent = st.camera
    ? `calibrated (${st.camera.size[0]}×${st.camera.size[1]}, focal ${st.camera.focal_px} px, error ${st.camera.rms_px} px)`
    : "not calibrated: lens distortion is guessed per frame";
  const board = st.candidate || st.board;
  document.getElementById("st-board").textContent = board
    ? `${st.candidate ? "found, not saved yet" : "saved"} (${board.method === "auto" ? "found automatically" : "from four corners"}, ${board.view_angle_deg}° from above)`
    : "not set: the referee searches for it";
  document.getElementById("st-colours").textContent = st.colours
    ? `learned (${st.colours.map((c) => COLOUR_NAMES[c] || c).join(", ")})`
    : "not learned: nominal colours";
  buttons.save.disabled = !st.candidate;
  if (st.problem) showError(st.problem);
}

function showError(message) {
  errorBox.textContent = message;
  errorBox.hidden = !message;
}

async function act(button, url, body, done) {
  showError("");
  button.disabled = true;
  try {
    const st = await post(url, body);
    showStatus(st); // also enables "save" exactly when there is something to save
    if (done) toast(done);
  } catch (err) {
    showError(err.message);
    button.disabled = false;
    return;
  }
  if (button !== buttons.save) button.disabled = false;
}

function stopTapping() {
  taps = null;
  view.classList.remove("tapping");
  view.querySelectorAll(".tap").forEach((dot) => dot.remove());
  prompt.textContent = PROMPT;
  buttons.tap.textContent = "Tap the four corners";
}

buttons.find.addEventListener("click", () => {
  stopTapping();
  act(buttons.find, "/calibrate/api/locate", {}, "Board found: check that the grid sits on it, then save");
});

buttons.tap.addEventListener("click", () => {
  if (taps) {
    stopTapping();
    return;
  }
  taps = [];
  view.classList.add("tapping");
  buttons.tap.textContent = "Cancel tapping";
  prompt.textContent = "Tap the four outer corners of the grid (where the outermost cells meet the rim), in any order.";
});

frame.addEventListener("click", (event) => {
  if (!taps) return;
  const box = frame.getBoundingClientRect();
  const x = (event.clientX - box.left) / box.width;
  const y = (event.clientY - box.top) / box.height;
  taps.push([x, y]);
  view.append(el("span", { class: "tap", style: `left:${x * 100}%;top:${y * 100}%` }));
  if (taps.length < 4) {
    prompt.textContent = `Corner ${taps.length} set; tap corner ${taps.length + 1} of 4.`;
    return;
  }
  const corners = taps;
  stopTapping();
  act(buttons.tap, "/calibrate/api/corners", { corners }, "Corners set: check the grid, then save");
});

buttons.save.addEventListener("click", () => {
  act(buttons.save, "/calibrate/api/save", {}, "Board position saved");
});

buttons.learn.addEventListener("click", () => {
  act(buttons.learn, "/calibrate/api/colours", {}, "Colours learned and saved");
});

showStatus(JSON.parse(document.getElementById("cal-status").textContent));
refresh();
