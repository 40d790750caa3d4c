"""Loading photos: upright by EXIF, and every bad input refused with a ReadError code."""
from __future__ import annotations

import struct
import zlib

import cv2
import numpy as np
import pytest

from vision.errors import ReadError
from vision.image_io import load_image, load_photo


def _asymmetric() -> np.ndarray:
    """A 300x400 image whose top-left quadrant is red, so any turn or mirror shows."""
    img = np.full((300, 400, 3), 200, np.uint8)
    img[:150, :200] = (0, 0, 255)
    return img


def _tiff_orientation(value: int) -> bytes:
    """A big-endian TIFF block with one IFD entry: Orientation (0x0112), SHORT."""
    return b"MM\x00*" + struct.pack(">IHHHIHHI", 8, 1, 0x0112, 3, 1, value, 0, 0)


def _jpeg_with_orientation(img: np.ndarray, value: int) -> bytes:
    jpeg = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()
    payload = b"Exif\x00\x00" + _tiff_orientation(value)
    app1 = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
    return jpeg[:2] + app1 + jpeg[2:]


def _png_with_orientation(img: np.ndarray, value: int) -> bytes:
    png = cv2.imencode(".png", img)[1].tobytes()
    body = _tiff_orientation(value)
    chunk = struct.pack(">I", len(body)) + b"eXIf" + body + struct.pack(">I", zlib.crc32(b"eXIf" + body))
    at = png.index(b"IDAT") - 4
    return png[:at] + chunk + png[at:]


def _red_corner(img: np.ndarray) -> str:
    h, w = img.shape[:2]
    quads = {"tl": img[: h // 2, : w // 2], "tr": img[: h // 2, w // 2:],
             "bl": img[h // 2:, : w // 2], "br": img[h // 2:, w // 2:]}
    return max(quads, key=lambda k: float(quads[k][..., 2].mean() - quads[k][..., 0].mean()))


# EXIF orientation -> where the stored top-left quadrant appears once displayed upright.
@pytest.mark.parametrize("value, corner, shape", [
    (1, "tl", (300, 400)), (3, "br", (300, 400)), (6, "tr", (400, 300)), (8, "bl", (400, 300)),
])
def test_jpeg_exif_orientation_is_applied(value: int, corner: str, shape: tuple[int, int]) -> None:
    img = load_image(_jpeg_with_orientation(_asymmetric(), value))
    assert img.shape == (*shape, 3) and img.dtype == np.uint8
    assert _red_corner(img) == corner


def test_png_exif_orientation_is_applied() -> None:
    img = load_image(_png_with_orientation(_asymmetric(), 6))
    assert img.shape == (400, 300, 3) and _red_corner(img) == "tr"


def test_jpeg_with_pixels_to_spare_is_decoded_reduced_and_upright() -> None:
    """A JPEG with at least twice the short side a reader needs is decoded at the smallest of
    1/2, 1/4, 1/8 scale that keeps it (libjpeg skips most of its inverse DCT), still turned
    upright by its EXIF orientation; never below the smallest photo accepted (``MIN_SIDE``)."""
    big = cv2.resize(_asymmetric(), (1600, 1200), interpolation=cv2.INTER_NEAREST)
    for value, corner, shape in ((1, "tl", (600, 800)), (6, "tr", (800, 600)), (3, "br", (600, 800))):
        img, factor = load_photo(_jpeg_with_orientation(big, value), 600)
        assert factor == 2 and img.shape == (*shape, 3) and _red_corner(img) == corner
    jpeg = _jpeg_with_orientation(big, 1)
    assert [load_photo(jpeg, side)[1] for side in (599, 300, 299, 150)] == [2, 4, 4, 4]  # 1200 / 8 < MIN_SIDE


def test_only_a_jpeg_with_pixels_to_spare_is_decoded_reduced() -> None:
    """A PNG's decoder cannot skip work by scale, and a JPEG short of twice the side asked for
    would be shrunk below it (or already is below it): both are decoded whole, as
    :func:`load_image` does."""
    big = cv2.resize(_asymmetric(), (1600, 1200), interpolation=cv2.INTER_NEAREST)
    png = _png_with_orientation(big, 6)
    img, factor = load_photo(png, 300)
    assert factor == 1 and img.shape == (1600, 1200, 3) and _red_corner(img) == "tr"
    assert np.array_equal(img, load_image(png))
    jpeg = _jpeg_with_orientation(big, 1)
    for side in (601, 1300, None):
        img, factor = load_photo(jpeg, side)
        assert factor == 1 and np.array_equal(img, load_image(jpeg))


def test_a_jpeg_is_reduced_only_by_a_divisor_of_both_its_sides() -> None:
    """libjpeg rounds a reduced side up: a 4001 x 3001 JPEG halved is 2001 x 1501, which scaled
    back spans 4002 x 3002 and, turned by EXIF orientation 3, puts every pixel one off. Such a
    JPEG is decoded whole; one whose sides 2 divides but 4 does not is halved, not quartered."""
    odd = np.zeros((3001, 4001, 3), np.uint8)
    odd[:1500, :2000] = (0, 0, 255)
    jpeg = _jpeg_with_orientation(odd, 3)
    img, factor = load_photo(jpeg, 1200)
    assert factor == 1 and img.shape == (3001, 4001, 3) and _red_corner(img) == "br"
    even = np.zeros((1802, 2402, 3), np.uint8)
    assert load_photo(_jpeg_with_orientation(even, 1), 450)[1] == 2  # 1802 >= 4 x 450, 2402 % 4 == 2


def test_loads_from_path(tmp_path) -> None:
    path = tmp_path / "photo.png"
    path.write_bytes(cv2.imencode(".png", _asymmetric())[1].tobytes())
    assert np.array_equal(load_image(path), _asymmetric())
    assert np.array_equal(load_image(str(path)), _asymmetric())


@pytest.mark.parametrize("data, code", [
    (b"", "unreadable_image"),
    (bytes(np.random.default_rng(1).integers(0, 256, 5000, dtype=np.uint8)), "not_an_image"),
    (b"just some text, not a photo\n" * 20, "not_an_image"),
    (b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00" * 100, "not_an_image"),
    (b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "unreadable_image"),
    (b"\xff\xd8\xff\xe0" + b"\x00" * 100, "unreadable_image"),
])
def test_bad_bytes_are_refused(data: bytes, code: str) -> None:
    with pytest.raises(ReadError) as err:
        load_image(data)
    assert err.value.code == code and "\n" not in err.value.message


def test_truncated_jpeg_is_unreadable() -> None:
    data = cv2.imencode(".jpg", _asymmetric())[1].tobytes()
    with pytest.raises(ReadError) as err:
        load_image(data[: len(data) // 2])
    assert err.value.code == "unreadable_image"


def test_missing_file_is_unreadable(tmp_path) -> None:
    with pytest.raises(ReadError) as err:
        load_image(tmp_path / "nope.jpg")
    assert err.value.code == "unreadable_image"
    assert err.value.to_json()["error"]["code"] == "unreadable_image"


def test_tiny_image_is_too_small() -> None:
    with pytest.raises(ReadError) as err:
        load_image(cv2.imencode(".png", np.zeros((100, 150, 3), np.uint8))[1].tobytes())
    assert err.value.code == "image_too_small"


def test_huge_image_is_refused_before_decoding() -> None:
    # A valid PNG header that claims 10000 x 10000 pixels; decoding it would need 300 MB.
    ihdr = struct.pack(">IIBBBBB", 10000, 10000, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    with pytest.raises(ReadError) as err:
        load_image(png + b"\x00" * 64)
    assert err.value.code == "image_too_large"


def test_arrays_are_checked_and_converted() -> None:
    from vision.image_io import as_bgr

    grey = np.full((300, 400), 128, np.uint8)
    assert as_bgr(grey).shape == (300, 400, 3)
    assert as_bgr(np.dstack([_asymmetric(), np.full((300, 400), 255, np.uint8)])).shape == (300, 400, 3)
    for bad, code in ((np.zeros((300, 400, 3), np.float32), "not_an_image"), ("photo.jpg", "not_an_image"),
                      (np.zeros((100, 400, 3), np.uint8), "image_too_small")):
        with pytest.raises(ReadError) as err:
            as_bgr(bad)
        assert err.value.code == code


def test_black_and_white_photos_are_refused() -> None:
    """A grey JPEG and a 16-bit grey PNG decode to three equal channels: no piece colour left."""
    from vision.image_io import require_colour

    colour = _asymmetric()
    assert require_colour(load_image(cv2.imencode(".jpg", colour)[1].tobytes())) is not None
    grey = cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY)
    for data in (cv2.imencode(".jpg", grey)[1].tobytes(), cv2.imencode(".png", grey.astype(np.uint16) * 257)[1].tobytes(),
                 cv2.imencode(".jpg", cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR))[1].tobytes()):
        with pytest.raises(ReadError) as err:
            require_colour(load_image(data))
        assert err.value.code == "no_colour" and "black and white" in err.value.message
