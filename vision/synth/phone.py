"""A phone camera's image pipeline, applied to a rendered photo after the renderer.

The renderer (``scene``, ``light``, ``sensor``, ``photo_file``) models the room, the lens and a
plain sensor; a real phone then runs its own image signal processor over those pixels before
the user ever sees them: it fixes (or fails to fix) the colour, tone-maps, denoises, sharpens,
zooms and compresses. Each of those steps changes colours and textures in ways our readers
were never tuned on, so a held-out bench (``bench.heldout``) develops rendered photos with
them to ask what a reader does with pictures it has not seen.

Every effect here is *geometry-preserving*: it moves no edge by more than about a pixel (the
lateral chromatic aberration moves the red and blue channels by at most 1.5 px at the corners
of a 1600 px photo), so the renderer's truth for each cell and token stays valid. Lengths are
given for a photo whose long side is 1600 px and scale with it, as in ``conditions``.

``develop(image, name, rng)`` draws one effect's parameters within its range and applies it;
``PHONE_EFFECTS`` names them all. The parameterised functions can be called directly.
"""

from __future__ import annotations

from typing import Callable

import cv2
import numpy as np

_BGR_LUMA = np.array([0.0722, 0.7152, 0.2126], np.float32)  # Rec. 709 weights, in BGR order
_GAMMA = 2.2  # close enough to sRGB's transfer curve for an effect that only shifts tones


def _scale(image: np.ndarray) -> float:
    """Pixels per pixel of a photo whose long side is 1600 px."""
    return max(image.shape[:2]) / 1600.0


def _linear(image: np.ndarray) -> np.ndarray:
    return (image.astype(np.float32) / 255.0) ** _GAMMA


def _encoded(linear: np.ndarray) -> np.ndarray:
    """Linear light back to 8-bit display values, clipped the way a phone clips."""
    return np.clip(np.clip(linear, 0.0, 1.0) ** (1.0 / _GAMMA) * 255.0 + 0.5, 0, 255).astype(np.uint8)


def _to_uint8(values: np.ndarray) -> np.ndarray:
    return np.clip(values + 0.5, 0, 255).astype(np.uint8)


def chromatic_aberration(image: np.ndarray, red_px: float, blue_px: float) -> np.ndarray:
    """Lateral chromatic aberration: red and blue imaged at a slightly different magnification
    than green, about the photo's centre.

    ``red_px`` / ``blue_px`` are each channel's radial shift at the corner of a 1600 x 1200
    photo (positive = outward). Phone lenses are short and wide, and the ISP's correction
    leaves a pixel or so at the corners: every piece edge there gets a red/cyan or blue/yellow
    fringe, which a reader sampling colour near cell borders reads as a different piece colour.
    """
    h, w = image.shape[:2]
    half_diagonal = 0.5 * np.hypot(w, h)
    cx, cy = (w - 1) / 2.0, (h - 1) / 2.0
    out = image.copy()
    for channel, px in ((2, red_px), (0, blue_px)):
        s = 1.0 + px * _scale(image) / half_diagonal
        m = np.array([[s, 0.0, (1 - s) * cx], [0.0, s, (1 - s) * cy]], np.float32)
        out[:, :, channel] = cv2.warpAffine(image[:, :, channel], m, (w, h), flags=cv2.INTER_LINEAR,
                                            borderMode=cv2.BORDER_REFLECT)
    return out


def local_tone_map(image: np.ndarray, strength: float, detail: float = 1.15) -> np.ndarray:
    """The "HDR" look of a phone's local tone mapping: the large-scale brightness (a blur of
    log luminance) is pulled toward the level of the brighter quarter of the frame by
    ``strength`` (0 = none, 1 = flat), local detail is boosted by ``detail``, colours keep
    their ratios.

    Shadows are lifted and highlights compressed by a different amount in each part of the
    frame, so a cell's brightness no longer follows the lamp's fall-off the reader expects; the
    blur also leaves soft halos beside the bright board on a dark table, as real phones do.
    """
    lin = _linear(image)
    logy = np.log(lin @ _BGR_LUMA + 1e-4)
    h, w = logy.shape
    q = 8  # the base layer is smooth: compute it on a small image
    small = cv2.resize(logy, (max(1, w // q), max(1, h // q)), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), max(1.0, 0.04 * max(h, w) / q), borderType=cv2.BORDER_REFLECT)
    base = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    anchor = float(np.percentile(small, 75))  # the bright subject keeps its level, the rest moves toward it
    target = anchor + (base - anchor) * (1.0 - strength) + (logy - base) * detail
    return _encoded(lin * np.exp(target - logy)[:, :, None])


def vivid(image: np.ndarray, saturation: float, contrast: float) -> np.ndarray:
    """A "vivid" picture style: chroma multiplied by ``saturation`` in Lab, and an S-curve
    (tanh) of lightness about mid grey, the steeper the larger ``contrast`` (its slope there is
    contrast / tanh(contrast)), black and white kept.

    Strong colours clip in one channel (a saturated red and orange, or yellow and a lit
    yellow-green, move toward the same corner of the gamut) and dark pieces crush toward black:
    the colour distances a classifier relies on shrink or swap."""
    lab = cv2.cvtColor(image.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)
    lab[:, :, 1:] *= saturation
    x = (lab[:, :, 0] - 50.0) / 50.0
    lab[:, :, 0] = 50.0 + 50.0 * np.tanh(contrast * x) / np.tanh(contrast)
    return _to_uint8(cv2.cvtColor(lab, cv2.COLOR_Lab2BGR) * 255.0)


def white_balance_error(image: np.ndarray, temperature: float, tint: float) -> np.ndarray:
    """Auto white balance gone wrong, as per-channel gains in linear light: ``temperature``
    stops warmer (red up, blue down; negative = cooler) and ``tint`` stops greener (negative =
    magenta), overall brightness kept.

    Mixed lamp and window light, LED strips and a table that fills the frame fool a phone's
    AWB; the tint axis (fluorescent green, LED magenta) is one the renderer's warm/cool cast
    never produces, so a reader's learnt colour prototypes see casts they were not fitted to.
    """
    gains = 2.0 ** np.array([-temperature / 2, tint, temperature / 2], np.float32)  # B, G, R
    gains /= float(gains @ _BGR_LUMA)
    return _encoded(_linear(image) * gains)


def one_hue(image: np.ndarray, *tones_bgr: tuple[float, float, float]) -> np.ndarray:
    """A phone's sepia, mono-tint, duotone or tritone filter (a gradient map): each pixel's brightness
    (its encoded luma) mapped onto the path through ``tones_bgr`` (0-255, darkest first, spread evenly
    over the brightness; a sepia tint runs from black). Two tones give a straight line of colours,
    three (dark, mid, light) a line bent at the middle grey. The pieces keep only their brightness.
    Not among ``PHONE_EFFECTS``: the readers doubt such a photo (``vision.one_hue``) rather than read
    it, so the held-out bench would only count refusals."""
    if len(tones_bgr) < 2:
        raise ValueError(f"a one-hue filter maps brightness onto at least two tones, got {len(tones_bgr)}")
    luma = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32) / 255.0
    stops = np.linspace(0.0, 1.0, len(tones_bgr))
    tones = np.array(tones_bgr, np.float32)
    return _to_uint8(np.dstack([np.interp(luma, stops, tones[:, k]) for k in range(3)]))


# The W3C Filter Effects ``sepia(1)`` matrix (rows: output R, G, B of input R, G, B), which photo apps copy.
_SEPIA_MATRIX = np.array([[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]], np.float32)


def sepia_matrix(image: np.ndarray) -> np.ndarray:
    """The classic sepia filter: each output channel a fixed mix of the pixel's encoded R, G, B
    (:data:`_SEPIA_MATRIX`), clipped at 255. Its three rows are nearly proportional, so the colour
    is a tint of one brightness, but white comes out at (345, 306, 239): red clips first (from a
    grey of about 190), then green, and the bright end of the tint bends toward yellow-white."""
    rgb = image[..., ::-1].astype(np.float32)
    return _to_uint8(np.clip(rgb @ _SEPIA_MATRIX.T, 0, 255))[..., ::-1].copy()


def noise_reduction(image: np.ndarray, luma_sigma: float, luma_px: float, chroma_px: float) -> np.ndarray:
    """Heavy noise reduction: an edge-preserving (bilateral) filter of luma with range
    ``luma_sigma`` (8-bit levels) and reach ``luma_px``, twice, and a wider edge-preserving
    filter of chroma (reach ``chroma_px``) at half resolution, as phones do when light is low.

    Every texture weaker than ``luma_sigma`` is smeared into flat "watercolour" patches: the
    faint edge of a clear piece, wood grain, the relief of an empty cell, the border between
    two pieces of similar brightness; strong edges stay where they are."""
    s = _scale(image)
    h, w = image.shape[:2]
    ycc = cv2.cvtColor(image, cv2.COLOR_BGR2YCrCb)
    y = ycc[:, :, 0]
    for _ in range(2):
        y = cv2.bilateralFilter(y, 0, luma_sigma, luma_px * s)
    half = cv2.resize(ycc[:, :, 1:], (max(1, w // 2), max(1, h // 2)), interpolation=cv2.INTER_AREA)
    half = np.dstack([cv2.bilateralFilter(np.ascontiguousarray(half[:, :, k]), 0, 12.0, chroma_px * s / 2)
                      for k in range(2)])
    ycc[:, :, 0] = y
    ycc[:, :, 1:] = cv2.resize(half, (w, h), interpolation=cv2.INTER_LINEAR)
    return cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR)


def oversharpen(image: np.ndarray, amount: float, radius_px: float) -> np.ndarray:
    """Aggressive unsharp masking of luma (``amount`` times the detail of a Gaussian of
    ``radius_px``): bright and dark halos beside every edge, clipped where they overshoot.

    A reader that samples close to cell borders or measures edges by their brightest or
    darkest pixel finds rims that are not on the board."""
    ycc = cv2.cvtColor(image, cv2.COLOR_BGR2YCrCb)
    y = ycc[:, :, 0].astype(np.float32)
    soft = cv2.GaussianBlur(y, (0, 0), radius_px * _scale(image))
    ycc[:, :, 0] = _to_uint8(y + amount * (y - soft))
    return cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR)


def jpeg_420(image: np.ndarray, quality: int) -> np.ndarray:
    """A low-quality JPEG with 4:2:0 chroma subsampling, decoded again: what a chat app or a
    "save space" setting stores.

    Colour is kept at half resolution in 16 x 16 blocks, so thin coloured features (a piece's
    edge, a chip's rim) bleed into their neighbours and block edges show in flat regions."""
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality),
                                            cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return cv2.imdecode(data, cv2.IMREAD_COLOR)


def digital_zoom(image: np.ndarray, factor: float) -> np.ndarray:
    """Digital zoom: the detail of a photo ``factor`` times smaller, interpolated (bicubic) back
    to full size. Geometry is kept (the centre-aligned resize maps every pixel back to its place)
    while real resolution drops: a reader sees the board at its expected size but with the
    sharpness of a photo taken from much farther away."""
    h, w = image.shape[:2]
    small = cv2.resize(image, (max(1, round(w / factor)), max(1, round(h / factor))), interpolation=cv2.INTER_AREA)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def exposure_error(image: np.ndarray, stops: float, noise: float, rng: np.random.Generator) -> np.ndarray:
    """Auto exposure off by ``stops`` (negative = darker) in linear light, clipped at white,
    plus ``noise`` levels of extra sensor noise at mid grey (a short exposure collects fewer
    photons).

    Metering on a white board underexposes the pieces into a few dark, noisy levels; metering
    on a dark table overexposes, clipping the board and the light pieces (yellow, white, clear)
    to the same 255s, so their colours cannot be told apart."""
    lin = _linear(image) * 2.0 ** stops
    out = _encoded(lin).astype(np.float32)
    if noise > 0:
        out += rng.standard_normal(out.shape, np.float32) * noise * np.sqrt(np.clip(out, 1, 255) / 128.0)
    return _to_uint8(out)


def phone_pipeline(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """An ordinary phone's default processing, every step at once and mild: residual chromatic
    aberration, a small white-balance error, noise reduction, local tone mapping, a lively
    colour style, sharpening and a JPEG. Real photos carry all of these together."""
    image = chromatic_aberration(image, _signed(rng, 0.3, 0.9), _signed(rng, 0.3, 0.9))
    image = white_balance_error(image, _signed(rng, 0.05, 0.3), _signed(rng, 0.03, 0.15))
    image = noise_reduction(image, rng.uniform(8, 16), rng.uniform(1.5, 3.0), rng.uniform(1.0, 2.5))
    image = local_tone_map(image, rng.uniform(0.2, 0.45), rng.uniform(1.0, 1.15))
    image = vivid(image, rng.uniform(1.1, 1.3), rng.uniform(0.9, 1.4))
    image = oversharpen(image, rng.uniform(0.4, 0.9), rng.uniform(1.0, 1.8))
    return jpeg_420(image, int(rng.integers(70, 88)))


def _signed(rng: np.random.Generator, lo: float, hi: float) -> float:
    """A magnitude in [lo, hi) with a random sign: errors go either way."""
    return float(rng.choice((-1.0, 1.0)) * rng.uniform(lo, hi))


# Each effect's range is the strong end of what phones do: the bench asks where readers break.
_DEVELOP: dict[str, Callable[[np.ndarray, np.random.Generator], np.ndarray]] = {
    "chromatic_aberration": lambda im, rng: chromatic_aberration(im, _signed(rng, 0.7, 1.5), _signed(rng, 0.7, 1.5)),
    "local_tone_map": lambda im, rng: local_tone_map(im, rng.uniform(0.45, 0.75), rng.uniform(1.1, 1.4)),
    "vivid": lambda im, rng: vivid(im, rng.uniform(1.35, 1.75), rng.uniform(1.3, 2.2)),
    "white_balance": lambda im, rng: white_balance_error(im, _signed(rng, 0.35, 0.8), _signed(rng, 0.15, 0.35)),
    "noise_reduction": lambda im, rng: noise_reduction(im, rng.uniform(12, 25), rng.uniform(2.5, 4.5),
                                                       rng.uniform(4.0, 8.0)),
    "oversharpen": lambda im, rng: oversharpen(im, rng.uniform(1.2, 2.5), rng.uniform(1.2, 2.5)),
    "jpeg_420": lambda im, rng: jpeg_420(im, int(rng.integers(20, 46))),
    "digital_zoom": lambda im, rng: digital_zoom(im, rng.uniform(1.6, 2.6)),
    "underexposed": lambda im, rng: exposure_error(im, -rng.uniform(1.0, 2.0), rng.uniform(1.5, 4.0), rng),
    "overexposed": lambda im, rng: exposure_error(im, rng.uniform(0.6, 1.4), 0.0, rng),
    "phone_pipeline": phone_pipeline,
    # a table lit by one weak lamp, the camera at its longest exposure: 5-7 stops under, a light board
    # at some 20-40 grey levels (added last so the earlier effects keep their draws)
    "dark_room": lambda im, rng: exposure_error(im, -rng.uniform(5.0, 7.0), rng.uniform(1.5, 4.0), rng),
}

PHONE_EFFECTS: tuple[str, ...] = tuple(_DEVELOP)


def develop(image: np.ndarray, effect: str, rng: np.random.Generator) -> np.ndarray:
    """``image`` (BGR uint8) as a phone's pipeline would hand it over after ``effect``, whose
    parameters are drawn from ``rng`` within the effect's range. Same shape and dtype."""
    if effect not in _DEVELOP:
        raise KeyError(f"unknown phone effect {effect!r}; known: {', '.join(PHONE_EFFECTS)}")
    return _DEVELOP[effect](image, rng)
