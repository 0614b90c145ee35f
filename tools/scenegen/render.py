"""Render a layout through a camera: felt, table, baselines, pot, winks, clutter.

The scene is drawn undistorted on a canvas (a pinhole camera with the same
pose and focal length, its principal point shifted so the canvas covers
every pixel the distorted image needs), then warped to the real image with
the exact inverse of the lens model. The planes (felt, table, floor) are
ray-cast per pixel and textured procedurally in mat millimetres; solids
(winks, pot, squidgers, mug, phone, pen) are projected polygons drawn back
to front with sub-pixel vertices and anti-aliasing.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
from scipy import ndimage
from shapely.geometry import Polygon

from calibration.camera import CameraModel
from rules.board import (
    BASELINE_DISTANCE_MM,
    POT_BASE_DIAMETER_MM,
    POT_HEIGHT_MM,
    POT_TOP_DIAMETER_MM,
    Colour,
    WinkSize,
)
from tools.scenegen.geometry import HALF_LENGTH_MM, HALF_WIDTH_MM, WinkSolid, rim_points
from tools.scenegen.layout import Distractor, Layout

F32 = npt.NDArray[Any]  # float32 images and masks

_SHIFT = 4  # sub-pixel bits for cv2 polygon drawing
_SCALE = 1 << _SHIFT

FELT_COLOURS_BGR = {
    "green": (0.30, 0.50, 0.28),
    "grey": (0.55, 0.55, 0.53),
    "beige": (0.62, 0.74, 0.80),
    "blue-grey": (0.62, 0.55, 0.48),
    "off-white": (0.80, 0.84, 0.86),
}

WINK_COLOURS_BGR = {
    Colour.BLUE: (0.62, 0.26, 0.06),
    Colour.GREEN: (0.18, 0.50, 0.08),
    Colour.RED: (0.10, 0.08, 0.72),
    Colour.YELLOW: (0.08, 0.78, 0.90),
}

TABLE_COLOURS_BGR = (
    (0.30, 0.50, 0.72),  # light oak
    (0.20, 0.32, 0.50),  # walnut
    (0.55, 0.62, 0.68),  # pale laminate
    (0.32, 0.33, 0.35),  # dark grey
    (0.70, 0.72, 0.73),  # white table
)

#: Tables by name, for choosing one on the command line (``--table``): the five
#: drawn at random, in that order, and tables that are only ever chosen by name.
#: ``beige-wood`` is a pale wooden top about the colour of beige felt, only a
#: little darker and yellower, with grain: the hardest table for finding a beige
#: mat (the felt/table step is a few Lab units under the grain's stripes).
TABLES_BY_NAME: dict[str, tuple[tuple[float, float, float], bool]] = {
    "light-oak": (TABLE_COLOURS_BGR[0], True),
    "walnut": (TABLE_COLOURS_BGR[1], True),
    "pale-laminate": (TABLE_COLOURS_BGR[2], False),
    "dark-grey": (TABLE_COLOURS_BGR[3], False),
    "white": (TABLE_COLOURS_BGR[4], False),
    "beige-wood": ((0.60, 0.73, 0.80), True),
}

POT_COLOURS_BGR = {
    "white": ((0.88, 0.88, 0.88), 1.0),
    "translucent-blue": ((0.70, 0.35, 0.15), 0.7),
    "translucent-red": ((0.15, 0.15, 0.70), 0.7),
    "clear": ((0.85, 0.85, 0.85), 0.35),
    "black": ((0.08, 0.08, 0.08), 1.0),
}


@dataclass(frozen=True)
class Look:
    """The per-scene appearance choices."""

    felt_name: str
    felt_bgr: np.ndarray
    table_bgr: np.ndarray
    floor_bgr: np.ndarray
    table_half_mm: tuple[float, float]
    light_mm: np.ndarray
    light_strength: float
    ambient: float
    baseline_width_mm: float
    baseline_bgr: np.ndarray
    wink_bgr: dict[Colour, np.ndarray]
    wood: bool
    plank_mm: float
    #: Broad specular strength of the table top (laminate shines more than wood).
    table_gloss: float
    #: Creases in the felt: (point on the line (2,), unit direction (2,), width mm, strength).
    creases: tuple[tuple[np.ndarray, np.ndarray, float, float], ...]
    #: Colour of the light (BGR multipliers): warm bulbs to cool daylight.
    light_bgr: np.ndarray


def choose_look(
    rng: np.random.Generator,
    *,
    wear: bool = False,
    felt: str | None = None,
    table: str | None = None,
) -> Look:
    """Felt, table, light and wink colours for one scene.

    With ``wear`` the scene also gets the marks of use: creases in the felt,
    a glossy table top and a coloured light. ``felt`` (a key of
    :data:`FELT_COLOURS_BGR`) and ``table`` (a key of :data:`TABLES_BY_NAME`)
    replace the drawn felt or table after every random draw is made, so the
    rest of the scene is the one its seed gives without them.
    """
    felt_name = str(rng.choice(list(FELT_COLOURS_BGR)))
    felt_bgr = np.asarray(FELT_COLOURS_BGR[felt_name]) * rng.uniform(0.9, 1.08, 3)
    table_i = int(rng.integers(len(TABLE_COLOURS_BGR)))
    table_bgr = np.asarray(TABLE_COLOURS_BGR[table_i]) * rng.uniform(0.9, 1.1, 3)
    light = np.array([rng.uniform(-1500, 1500), rng.uniform(-1000, 1000), rng.uniform(1800, 2600)])
    wink_bgr = {
        c: np.clip(np.asarray(v) * rng.uniform(0.9, 1.1, 3), 0, 1)
        for c, v in WINK_COLOURS_BGR.items()
    }
    # The wear draws from its own child stream, so switching it on changes
    # nothing else about a scene (felt, light, noise stay as they were).
    extra = rng.spawn(1)[0]
    table_gloss = float(
        extra.uniform(0.03, 0.08) if table_i in (0, 1) else extra.uniform(0.08, 0.2)
    )
    creases = tuple(
        (
            extra.uniform([-700.0, -350.0], [700.0, 350.0]),
            _unit_vec(float(extra.uniform(0, np.pi))),
            float(extra.uniform(12.0, 40.0)),
            float(extra.uniform(0.02, 0.05)),
        )
        for _ in range(int(extra.integers(0, 3)))
    )
    light_bgr = _light_colour(float(extra.uniform(-1.0, 1.0)))
    if not wear:
        table_gloss, creases, light_bgr = 0.0, (), np.ones(3)
    look = Look(
        felt_name=felt_name,
        felt_bgr=felt_bgr,
        table_bgr=table_bgr,
        floor_bgr=np.array([0.16, 0.17, 0.18]) * rng.uniform(0.7, 1.3),
        table_half_mm=(
            HALF_LENGTH_MM + float(rng.uniform(120, 500)),
            HALF_WIDTH_MM + float(rng.uniform(150, 500)),
        ),
        light_mm=light,
        light_strength=float(rng.uniform(0.55, 0.8)),
        ambient=float(rng.uniform(0.35, 0.5)),
        baseline_width_mm=float(rng.uniform(1.5, 3.0)),
        baseline_bgr=np.array([0.12, 0.12, 0.13]) * rng.uniform(0.6, 1.4),
        wink_bgr=wink_bgr,
        wood=table_i in (0, 1) or bool(rng.random() < 0.3),
        plank_mm=float(rng.uniform(90.0, 200.0)),
        table_gloss=table_gloss,
        creases=creases,
        light_bgr=light_bgr,
    )
    # The chosen felt and table draw their small jitter from the wear's child
    # stream, after its own draws: the main stream, and so the rest of the
    # scene, stays exactly as the seed gives it.
    if felt is not None:
        colour = np.asarray(FELT_COLOURS_BGR[felt]) * extra.uniform(0.95, 1.05, 3)
        look = dataclasses.replace(look, felt_name=felt, felt_bgr=colour)
    if table is not None:
        table_colour, wood = TABLES_BY_NAME[table]
        colour = np.asarray(table_colour) * extra.uniform(0.95, 1.05, 3)
        look = dataclasses.replace(look, table_bgr=colour, wood=wood)
    return look


def _unit_vec(angle: float) -> np.ndarray:
    return np.array([math.cos(angle), math.sin(angle)])


def _light_colour(warmth: float) -> np.ndarray:
    """BGR gains of the light after the camera's partial white balance.

    ``warmth`` -1 is cool daylight, +1 a warm bulb; what is left after auto
    white balance is a cast of up to about 12 % between red and blue.
    """
    return np.array([1.0 - 0.12 * warmth, 1.0 + 0.02 * warmth, 1.0 + 0.12 * warmth])


# --------------------------------------------------------------------------
# Textures
# --------------------------------------------------------------------------


def _noise_tile(rng: np.random.Generator, size: int, sigmas: tuple[float, ...]) -> F32:
    """A tileable zero-mean, unit-std noise tile (blurred white noise, wrapped)."""
    acc = np.zeros((size, size), np.float32)
    for k, sigma in enumerate(sigmas):
        white = rng.standard_normal((size, size)).astype(np.float32)
        blurred = ndimage.gaussian_filter(white, sigma, mode="wrap")
        blurred /= blurred.std() + 1e-9
        acc += blurred / (k + 1)
    acc /= acc.std() + 1e-9
    return acc


def _wood_tile(rng: np.random.Generator, size: int) -> F32:
    white = rng.standard_normal((size, size)).astype(np.float32)
    grain = ndimage.gaussian_filter(white, (2.0, 60.0), mode="wrap")
    grain /= grain.std() + 1e-9
    fine = ndimage.gaussian_filter(rng.standard_normal((size, size)), (0.6, 8.0), mode="wrap")
    fine /= fine.std() + 1e-9
    rows = np.arange(size, dtype=np.float32)[:, None]
    rings = np.sin(rows * (2 * np.pi * 5 / size) + 2.5 * grain)
    return np.asarray(0.5 * rings + 0.4 * grain + 0.25 * fine, dtype=np.float32)


def _sample_tile(tile: F32, u: F32, v: F32) -> F32:
    size = tile.shape[0]
    mu = np.mod(u, size).astype(np.float32)
    mv = np.mod(v, size).astype(np.float32)
    return np.asarray(cv2.remap(tile, mu, mv, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP))


# --------------------------------------------------------------------------
# Canvas geometry
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Canvas:
    """The undistorted drawing surface and how it maps to the output image."""

    width: int
    height: int
    k: np.ndarray  # pinhole intrinsics of the canvas
    rotation: np.ndarray
    translation: np.ndarray
    map_x: F32  # output pixel -> canvas x
    map_y: F32

    @property
    def position(self) -> np.ndarray:
        return np.asarray(-self.rotation.T @ self.translation)

    def project(self, pts_mm: np.ndarray) -> np.ndarray:
        """Pinhole projection into the canvas, shape (N, 2); NaN behind the camera."""
        cam = pts_mm @ self.rotation.T + self.translation
        z = cam[:, 2:3]
        uv = (cam[:, :2] / np.where(z > 1e-6, z, np.nan)) * [self.k[0, 0], self.k[1, 1]]
        return np.asarray(uv + [self.k[0, 2], self.k[1, 2]])

    def depth(self, pts_mm: np.ndarray) -> np.ndarray:
        return np.asarray((pts_mm @ self.rotation.T + self.translation)[:, 2])


def make_canvas(cam: CameraModel) -> Canvas:
    """Canvas covering every undistorted location the output image samples."""
    w, h = cam.image_size_wh
    step = 8 if w > 3000 else 4
    gx = np.arange(0, w + step, step, dtype=np.float64)
    gy = np.arange(0, h + step, step, dtype=np.float64)
    grid = np.stack(np.meshgrid(gx, gy), -1).reshape(-1, 2)
    norm = cam.undistort_image_points(grid)
    k = cam.camera_matrix
    und = norm * [k[0, 0], k[1, 1]] + [k[0, 2], k[1, 2]]
    pad = 3.0
    lo = np.floor(und.min(axis=0) - pad)
    hi = np.ceil(und.max(axis=0) + pad)
    lo = np.maximum(lo, [-0.5 * w, -0.5 * h])
    hi = np.minimum(hi, [1.5 * w, 1.5 * h])
    kc = k.copy()
    kc[0, 2] -= lo[0]
    kc[1, 2] -= lo[1]
    mx = (und[:, 0] - lo[0]).reshape(len(gy), len(gx)).astype(np.float32)
    my = (und[:, 1] - lo[1]).reshape(len(gy), len(gx)).astype(np.float32)
    # The coarse map is smooth: bilinear upsampling to every pixel is exact
    # to well under a hundredth of a pixel.
    mx = _upsample_exact(und[:, 0] - lo[0], len(gx), len(gy), step, w, h)
    my = _upsample_exact(und[:, 1] - lo[1], len(gx), len(gy), step, w, h)
    return Canvas(
        width=int(hi[0] - lo[0]),
        height=int(hi[1] - lo[1]),
        k=kc,
        rotation=cam.rotation,
        translation=cam.translation_mm,
        map_x=mx,
        map_y=my,
    )


def _upsample_exact(values: np.ndarray, nx: int, ny: int, step: int, w: int, h: int) -> F32:
    grid = values.reshape(ny, nx).astype(np.float32)
    xs = (np.arange(w, dtype=np.float32) / step)[None, :].repeat(h, 0)
    ys = (np.arange(h, dtype=np.float32) / step)[:, None].repeat(w, 1)
    return np.asarray(cv2.remap(grid, xs, ys, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE))


# --------------------------------------------------------------------------
# Planes
# --------------------------------------------------------------------------


def _light_factor(look: Look, x: F32, y: F32, z: float) -> F32:
    lx, ly, lz = look.light_mm
    dx = lx - x
    dy = ly - y
    dz = lz - z
    d2 = dx * dx + dy * dy + dz * dz
    ref = lx * lx + ly * ly + lz * lz
    lam = (dz / np.sqrt(d2)) * (ref / d2)
    return np.asarray(look.ambient + look.light_strength * lam, dtype=np.float32)


def _gloss(look: Look, camera_mm: np.ndarray, x: F32, y: F32, z: float) -> F32:
    """Blinn-Phong highlight of a horizontal surface: the light's blurred reflection."""
    lx, ly, lz = look.light_mm
    to_l = np.stack([lx - x, ly - y, np.full_like(x, lz - z)], -1)
    to_c = np.stack([camera_mm[0] - x, camera_mm[1] - y, np.full_like(x, camera_mm[2] - z)], -1)
    half = to_l / np.linalg.norm(to_l, axis=-1, keepdims=True)
    half = half + to_c / np.linalg.norm(to_c, axis=-1, keepdims=True)
    cos_h = half[..., 2] / np.linalg.norm(half, axis=-1)
    return np.asarray(np.power(np.clip(cos_h, 0, 1), 60.0), dtype=np.float32)


def render_planes(canvas: Canvas, layout: Layout, look: Look, rng: np.random.Generator) -> F32:
    """Felt, baselines, mat edge, table and floor, lit; shape (H, W, 3) in [0, 1]."""
    out = np.empty((canvas.height, canvas.width, 3), np.float32)
    kinv = np.linalg.inv(canvas.k)
    rt = canvas.rotation.T
    pos = canvas.position
    focal = float(canvas.k[0, 0])
    mmpp_centre = float(np.linalg.norm(pos)) / focal
    felt_texel = float(np.clip(mmpp_centre * 0.6, 0.05, 1.2))
    felt_fine = _noise_tile(rng, 512, (0.7, 2.0))
    felt_coarse = _noise_tile(rng, 256, (6.0, 16.0))
    table_tile = _wood_tile(rng, 512) if look.wood else _noise_tile(rng, 512, (1.0, 4.0))
    floor_tile = _noise_tile(rng, 256, (1.0, 8.0))
    table_z = layout.table_z_mm
    floor_z = table_z - 740.0
    thl, thw = look.table_half_mm
    corners = np.array([c for c in layout.corners.values()], dtype=np.float32)
    dirs = corners / np.linalg.norm(corners, axis=1, keepdims=True)
    fibre_angle = float(rng.uniform(0, np.pi))
    strip = 256
    for y0 in range(0, canvas.height, strip):
        y1 = min(canvas.height, y0 + strip)
        vs, us = np.mgrid[y0:y1, 0 : canvas.width].astype(np.float32)
        rays = np.stack([us, vs, np.ones_like(us)], -1) @ (rt @ kinv).T.astype(np.float32)
        rz = rays[..., 2]
        rz_safe = np.where(rz < -1e-6, rz, -1e-6)
        ray_len = np.linalg.norm(rays, axis=-1)

        def hit(
            z: float, rays: F32 = rays, rz_safe: F32 = rz_safe, ray_len: F32 = ray_len
        ) -> tuple[F32, F32, F32]:
            t = (z - pos[2]) / rz_safe
            x = pos[0] + t * rays[..., 0]
            y = pos[1] + t * rays[..., 1]
            mmpp = t * ray_len / focal / np.maximum(-rz_safe / ray_len, 0.15)
            return x.astype(np.float32), y.astype(np.float32), mmpp.astype(np.float32)

        # Floor.
        fx, fy, _ = hit(floor_z)
        floor = (
            look.floor_bgr[None, None, :]
            * (1 + 0.08 * _sample_tile(floor_tile, fx / 4.0, fy / 4.0))[..., None]
        )
        colour: F32 = floor.astype(np.float32)

        # Table top.
        tx, ty, tmm = hit(table_z)
        if look.wood:
            # Planks along x, each with its own tone and grain offset, dark seams between.
            plank = np.floor(ty / look.plank_mm)
            tone = np.sin(plank * 12.9898) * 43758.5453
            tone = (tone - np.floor(tone) - 0.5).astype(np.float32)
            tex = _sample_tile(table_tile, (tx + plank * 173.0) / 1.5, ty / 1.5)
            seam_d = np.abs(ty - np.round(ty / look.plank_mm) * look.plank_mm)
            seam = np.clip(0.6 + 0.5 * tmm - seam_d, 0, None) / np.maximum(tmm, 0.6)
            table_mod = (1 + 0.09 * tex + 0.14 * tone) * (1 - 0.35 * np.clip(seam, 0, 1))
        else:
            tex = _sample_tile(table_tile, tx / 2.0, ty / 2.0)
            table_mod = 1 + 0.035 * tex
        table = look.table_bgr[None, None, :] * table_mod[..., None]
        table *= _light_factor(look, tx, ty, table_z)[..., None]
        if look.table_gloss > 0:
            table += (look.table_gloss * _gloss(look, pos, tx, ty, table_z))[..., None]
        sd_table = np.minimum(thl - np.abs(tx), thw - np.abs(ty))  # >0 inside
        cov = np.clip(0.5 + sd_table / np.maximum(tmm, 1e-3), 0, 1)[..., None]
        colour = colour * (1 - cov) + table * cov

        if layout.mat_present:
            # The mat's side: where the table ray lands under the mat.
            under = (np.abs(tx) <= HALF_LENGTH_MM) & (np.abs(ty) <= HALF_WIDTH_MM)
            side = look.felt_bgr[None, None, :] * 0.55
            colour = np.where(under[..., None], side.astype(np.float32), colour)

            mx, my, mmm = hit(0.0)
            ca, sa = math.cos(fibre_angle), math.sin(fibre_angle)
            fu = (ca * mx + sa * my) / felt_texel
            fv = (-sa * mx + ca * my) / felt_texel
            fine = _sample_tile(felt_fine, fu, fv * 0.6)
            coarse = _sample_tile(felt_coarse, mx / 8.0, my / 8.0)
            felt = look.felt_bgr[None, None, :] * (1 + 0.05 * fine + 0.035 * coarse)[..., None]
            # Baselines: box-filtered coverage of a thin line beyond p.d = 914.4.
            half_w = look.baseline_width_mm / 2
            line = np.zeros(mx.shape, np.float32)
            for d in dirs:
                dist = np.abs(mx * d[0] + my * d[1] - BASELINE_DISTANCE_MM)
                c = np.clip(half_w + mmm / 2 - dist, 0, None)
                c = np.minimum(c, np.minimum(2 * half_w, mmm)) / mmm
                line = np.maximum(line, c)
            felt = felt * (1 - line[..., None]) + look.baseline_bgr[None, None, :] * line[..., None]
            felt *= _light_factor(look, mx, my, 0.0)[..., None]
            for point, direction, width, strength in look.creases:
                # A ridge lit from one side: lighter on one flank, darker on the other.
                across = ((mx - point[0]) * -direction[1] + (my - point[1]) * direction[0]) / width
                felt *= (1 + 2.3 * strength * across * np.exp(-across * across))[..., None]
            sd_mat = np.minimum(HALF_LENGTH_MM - np.abs(mx), HALF_WIDTH_MM - np.abs(my))
            mcov = np.clip(0.5 + sd_mat / np.maximum(mmm, 1e-3), 0, 1)[..., None]
            colour = colour * (1 - mcov) + felt * mcov
        bad = rz >= -1e-6
        colour[bad] = look.floor_bgr * 0.8
        out[y0:y1] = colour
    return out


# --------------------------------------------------------------------------
# Solids
# --------------------------------------------------------------------------


Shader = Callable[[F32, F32], F32]


def _coverage(poly_px: np.ndarray, shape_hw: tuple[int, ...]) -> tuple[F32, int, int] | None:
    """Exact-ish area coverage of a convex polygon over its bounding patch.

    OpenCV's anti-aliased fill grows shapes by about 0.7 px, which would bias
    every wink's apparent size; instead the polygon is filled without
    anti-aliasing on a grid ``s`` times finer and box-averaged down. The
    fine fill includes boundary samples, so the polygon is first moved in
    by half a fine sample. Huge shapes (tables, mugs in closeups) fall back
    to a cheaper grid.
    """
    if poly_px.size == 0 or not np.all(np.isfinite(poly_px)):
        return None
    x0 = int(max(math.floor(poly_px[:, 0].min()) - 2, 0))
    y0 = int(max(math.floor(poly_px[:, 1].min()) - 2, 0))
    x1 = int(min(math.ceil(poly_px[:, 0].max()) + 3, shape_hw[1]))
    y1 = int(min(math.ceil(poly_px[:, 1].max()) + 3, shape_hw[0]))
    if x1 <= x0 or y1 <= y0:
        return None
    w, h = x1 - x0, y1 - y0
    area = w * h
    s = 8 if area <= 40_000 else 4 if area <= 250_000 else 2 if area <= 1_000_000 else 1
    local = poly_px - [x0, y0]
    if s == 1:
        mask = np.zeros((h, w), np.uint8)
        cv2.fillPoly(mask, [np.round(local * _SCALE).astype(np.int32)], 255, cv2.LINE_AA, _SHIFT)
        return mask.astype(np.float32) / 255.0, x0, y0
    shrunk = Polygon(local).buffer(-0.5 / s, join_style=2)
    if shrunk.is_empty or shrunk.geom_type != "Polygon":
        return None
    pts = np.asarray(shrunk.exterior.coords)[:-1]
    fine = (pts + 0.5) * s - 0.5
    mask = np.zeros((h * s, w * s), np.uint8)
    cv2.fillPoly(mask, [np.round(fine * _SCALE).astype(np.int32)], 255, cv2.LINE_8, _SHIFT)
    small = cv2.resize(mask, (w, h), interpolation=cv2.INTER_AREA)
    return small.astype(np.float32) / 255.0, x0, y0


def _fill(
    img: F32,
    poly_px: np.ndarray,
    colour: np.ndarray,
    alpha: float = 1.0,
    shader: Shader | None = None,
) -> None:
    """Anti-aliased convex polygon fill, blended by ``alpha``.

    ``shader(xs, ys)`` may give a per-pixel colour (h, w, C) from canvas
    pixel coordinates instead of the flat ``colour``.
    """
    got = _coverage(poly_px, img.shape)
    if got is None:
        return
    cov, x0, y0 = got
    h, w = cov.shape
    a = (cov * alpha)[..., None]
    region = img[y0 : y0 + h, x0 : x0 + w]
    if shader is not None:
        ys, xs = np.mgrid[y0 : y0 + h, x0 : x0 + w].astype(np.float32)
        fill = shader(xs, ys)
    else:
        fill = np.asarray(colour, np.float32)[None, None, :]
    region *= 1 - a
    region += a * fill


def _shade(
    normal: np.ndarray, point: np.ndarray, look: Look, canvas: Canvas
) -> tuple[float, float]:
    """Diffuse factor and specular strength for a flat face."""
    to_light = look.light_mm - point
    to_light /= np.linalg.norm(to_light)
    to_cam = canvas.position - point
    to_cam /= np.linalg.norm(to_cam)
    diffuse = look.ambient + look.light_strength * max(0.0, float(normal @ to_light))
    half = to_light + to_cam
    half /= np.linalg.norm(half)
    spec = max(0.0, float(normal @ half)) ** 40
    return diffuse, spec


def draw_disc(
    img: F32,
    canvas: Canvas,
    look: Look,
    wink: WinkSolid,
    colour: np.ndarray,
    *,
    gloss: float = 0.35,
    alpha: float = 1.0,
) -> None:
    """A disc with a rounded rim: visible wall first, then the facing face."""
    n = wink.normal
    c = wink.centre
    r, h, b = wink.radius_mm, wink.thickness_mm, wink.bevel_mm
    to_cam = canvas.position - c
    face_sign = 1.0 if float(n @ to_cam) >= 0 else -1.0
    count = 72 if canvas.k[0, 0] * r / max(np.linalg.norm(to_cam), 1.0) < 40 else 160
    wall = np.vstack(
        [
            rim_points(wink, (h / 2 - b), r, count),
            rim_points(wink, -(h / 2 - b), r, count),
            rim_points(wink, h / 2, r - b, count),
            rim_points(wink, -h / 2, r - b, count),
        ]
    )
    wall_px = canvas.project(wall)
    if not np.all(np.isfinite(wall_px)):
        return
    hull = cv2.convexHull(wall_px.astype(np.float32)).reshape(-1, 2)
    diffuse, spec = _shade(n * face_sign, c, look, canvas)
    _fill(img, hull.astype(np.float64), colour * diffuse * 0.62, alpha)
    face = rim_points(wink, face_sign * h / 2, r - b, count)
    face_px = canvas.project(face)
    centre_px = canvas.project(c[None, :] + face_sign * (h / 2) * n[None, :])[0]
    toward = look.light_mm[:2] - c[:2]
    toward = toward / (np.linalg.norm(toward) + 1e-9)
    lit_px = canvas.project(
        np.array([[c[0] + toward[0] * (r - b), c[1] + toward[1] * (r - b), c[2]]])
    )[0]
    g = lit_px - centre_px
    radius_px = float(np.linalg.norm(g)) + 1e-6
    g = g / radius_px
    base = np.asarray(colour, np.float32) * np.float32(diffuse)
    spot = centre_px + 0.35 * radius_px * g
    sigma2 = np.float32(2 * (0.4 * radius_px) ** 2)
    sheen = np.float32(gloss * (0.25 * spec + 0.05))

    def shader(xs: F32, ys: F32) -> F32:
        # A gentle gradient towards the light and a soft sheen on the plastic.
        along = ((xs - centre_px[0]) * g[0] + (ys - centre_px[1]) * g[1]) / radius_px
        d2 = (xs - spot[0]) ** 2 + (ys - spot[1]) ** 2
        shade = base[None, None, :] * (1 + 0.07 * along)[..., None]
        return np.asarray(shade + (sheen * np.exp(-d2 / sigma2))[..., None])

    _fill(img, face_px, base, alpha, shader=shader)


def _cylinder_ring(centre: np.ndarray, radius: float, z: float, count: int = 96) -> np.ndarray:
    ang = np.linspace(0, 2 * np.pi, count, endpoint=False)
    return np.stack(
        [centre[0] + radius * np.cos(ang), centre[1] + radius * np.sin(ang), np.full(count, z)],
        -1,
    )


def draw_cone(
    img: F32,
    canvas: Canvas,
    look: Look,
    centre_xy: np.ndarray,
    base_z: float,
    r_base: float,
    r_top: float,
    height: float,
    colour: np.ndarray,
    alpha: float,
    interior: np.ndarray | None,
) -> None:
    """A truncated cone (pot, mug): lit side facets, rim, and a darker inside."""
    count = 96
    base = _cylinder_ring(centre_xy, r_base, base_z, count)
    top = _cylinder_ring(centre_xy, r_top, base_z + height, count)
    bpx = canvas.project(base)
    tpx = canvas.project(top)
    if not (np.all(np.isfinite(bpx)) and np.all(np.isfinite(tpx))):
        return
    cam = canvas.position
    slope = (r_top - r_base) / height
    facets = []
    for i in range(count):
        j = (i + 1) % count
        mid = 0.25 * (base[i] + base[j] + top[i] + top[j])
        radial = mid[:2] - centre_xy
        radial /= np.linalg.norm(radial)
        normal = np.array([radial[0], radial[1], -slope])
        normal /= np.linalg.norm(normal)
        if float(normal @ (cam - mid)) <= 0:
            continue
        diffuse, spec = _shade(normal, mid, look, canvas)
        facets.append((np.vstack([bpx[i], bpx[j], tpx[j], tpx[i]]), colour * diffuse + 0.5 * spec))
    # Silhouette underneath, so the facets' anti-aliased seams do not show.
    hull = cv2.convexHull(np.vstack([bpx, tpx]).astype(np.float32)).reshape(-1, 2)
    _fill(img, hull.astype(np.float64), colour * (look.ambient + 0.3), alpha)
    for quad, col in facets:
        _fill(img, quad, np.clip(col, 0, 1.3), alpha)
    if interior is not None:
        inner = _cylinder_ring(centre_xy, r_top - 1.5, base_z + height, count)
        _fill(img, tpx, np.clip(colour * (look.ambient + 0.45), 0, 1), alpha)
        _fill(img, canvas.project(inner), interior, min(1.0, alpha + 0.25))


def draw_box(
    img: F32,
    canvas: Canvas,
    look: Look,
    d: Distractor,
) -> None:
    """A box lying on its support (phone, pen, score sheet)."""
    hl, hw, hh = d.size_mm[0] / 2, d.size_mm[1] / 2, d.size_mm[2]
    ca, sa = math.cos(d.angle_rad), math.sin(d.angle_rad)
    cx, cy = d.centre_mm

    def pt(dx: float, dy: float, z: float) -> np.ndarray:
        return np.array([cx + ca * dx - sa * dy, cy + sa * dx + ca * dy, d.base_z_mm + z])

    corners = [(-hl, -hw), (hl, -hw), (hl, hw), (-hl, hw)]
    bottom = np.array([pt(x, y, 0.0) for x, y in corners])
    top = np.array([pt(x, y, hh) for x, y in corners])
    colour = np.asarray(d.colour_bgr, np.float64) / 255.0
    cam = canvas.position
    centre = np.array([cx, cy, d.base_z_mm + hh / 2])
    for i in range(4):
        j = (i + 1) % 4
        mid = 0.25 * (bottom[i] + bottom[j] + top[i] + top[j])
        normal = mid - centre
        normal[2] = 0.0
        normal /= np.linalg.norm(normal)
        if float(normal @ (cam - mid)) <= 0:
            continue
        diffuse, _ = _shade(normal, mid, look, canvas)
        quad = canvas.project(np.vstack([bottom[i], bottom[j], top[j], top[i]]))
        _fill(img, quad, colour * diffuse * 0.8)
    diffuse, spec = _shade(np.array([0.0, 0.0, 1.0]), centre, look, canvas)
    gloss = 0.6 if d.kind == "phone" else 0.1
    _fill(img, canvas.project(top), np.clip(colour * diffuse + gloss * spec, 0, 1.2))
    if d.kind == "sheet":
        # A score sheet: ruled rows and a few columns.
        ink = np.array([0.45, 0.40, 0.35])
        for k in range(1, 14):
            y = -hw + k * (2 * hw / 14)
            a, b = pt(-hl + 8, y, hh + 0.01), pt(hl - 8, y, hh + 0.01)
            _line(img, canvas, a, b, ink, 0.35)
        for k in (1, 2, 3, 4):
            x = -hl + k * (2 * hl / 5)
            a, b = pt(x, -hw + 8, hh + 0.01), pt(x, hw - 8, hh + 0.01)
            _line(img, canvas, a, b, ink, 0.35)


def _line(
    img: F32, canvas: Canvas, a: np.ndarray, b: np.ndarray, colour: np.ndarray, width_mm: float
) -> None:
    direction = b - a
    direction[2] = 0
    direction /= np.linalg.norm(direction)
    perp = np.array([-direction[1], direction[0], 0.0]) * width_mm / 2
    quad = canvas.project(np.vstack([a - perp, b - perp, b + perp, a + perp]))
    _fill(img, quad, colour, 0.8)


# --------------------------------------------------------------------------
# Shadows
# --------------------------------------------------------------------------


def _shadow_of(points: np.ndarray, light: np.ndarray, plane_z: float) -> np.ndarray:
    """Project points from a point light onto the plane z = plane_z."""
    h = points[:, 2:3] - plane_z
    span = light[2] - points[:, 2:3]
    return np.asarray(points + (points - light[None, :]) * (h / np.maximum(span, 1.0)))


def render_shadows(canvas: Canvas, layout: Layout, look: Look) -> F32:
    """Darkening factor (H, W) in [0, 1] from soft cast shadows and contact shading."""
    mask = np.zeros((canvas.height, canvas.width), np.float32)
    focal = canvas.k[0, 0]

    def add(poly_mm: np.ndarray, strength: float) -> None:
        px = canvas.project(poly_mm)
        if not np.all(np.isfinite(px)):
            return
        hull = cv2.convexHull(px.astype(np.float32)).reshape(-1, 2).astype(np.float64)
        tmp_colour = np.array([strength], np.float32)
        _fill(mask[..., None], hull, tmp_colour)

    for w in layout.winks:
        if w.placement == "potted":
            continue
        plane = layout.table_z_mm if w.centre[2] < 0 else 0.0
        rim = rim_points(w, -w.thickness_mm / 2, w.radius_mm, 48)
        rim_top = rim_points(w, w.thickness_mm / 2, w.radius_mm, 48)
        add(_shadow_of(np.vstack([rim, rim_top]), look.light_mm, plane), 0.35)
    for d in layout.distractors:
        fp = np.asarray(d.footprint().exterior.coords)[:-1]
        top = np.hstack([fp, np.full((len(fp), 1), d.base_z_mm + d.size_mm[2])])
        base = np.hstack([fp, np.full((len(fp), 1), d.base_z_mm)])
        add(_shadow_of(np.vstack([base, top]), look.light_mm, d.base_z_mm), 0.3)
    if layout.mat_present:
        c = np.zeros(2)
        pot = np.vstack(
            [
                _cylinder_ring(c, POT_BASE_DIAMETER_MM / 2, 0.0, 48),
                _cylinder_ring(c, POT_TOP_DIAMETER_MM / 2, POT_HEIGHT_MM, 48),
            ]
        )
        add(_shadow_of(pot, look.light_mm, 0.0), 0.35)
    dist = float(np.linalg.norm(canvas.position))
    sigma = max(0.8, 1.8 * focal / dist)  # a few mm of penumbra
    return np.asarray(cv2.GaussianBlur(mask, (0, 0), sigma))


# --------------------------------------------------------------------------
# The whole picture
# --------------------------------------------------------------------------


def render_scene(
    layout: Layout,
    cam: CameraModel,
    rng: np.random.Generator,
    *,
    squops: Mapping[str, Sequence[str]] | None = None,
    noise_scale: float = 1.0,
    wear: bool = False,
    felt: str | None = None,
    table: str | None = None,
) -> np.ndarray:
    """Render the layout as the camera would see it.

    Parameters
    ----------
    layout : Layout
    cam : CameraModel
    rng : numpy Generator
        Drives every appearance choice (felt, light, noise).
    squops : mapping of str to sequence of str, optional
        For each wink id, the ids it lies above (from the solids). A wink is
        always drawn after every wink it squops, so the picture shows the
        same upper wink as the ground truth.
    noise_scale : float
        Multiplies the sensor noise.
    wear : bool
        Creases in the felt, a glossy table and a coloured light (off by
        default so that the bundled samples stay as they are).
    felt, table : str, optional
        Force the felt (a key of :data:`FELT_COLOURS_BGR`) or the table (a key
        of :data:`TABLES_BY_NAME`); the rest of the scene stays as drawn.

    Returns
    -------
    image_bgr : (H, W, 3) ndarray of uint8
    """
    look = choose_look(rng, wear=wear, felt=felt, table=table)
    canvas = make_canvas(cam)
    img = render_planes(canvas, layout, look, rng)
    img *= (1 - render_shadows(canvas, layout, look))[..., None]

    pot_colour, pot_alpha = POT_COLOURS_BGR[layout.pot_material]
    pot_rgb = np.asarray(pot_colour)
    potted = [w for w in layout.winks if w.placement == "potted"]
    for kind, obj in _painter_order(layout, canvas, squops or {}):
        if isinstance(obj, WinkSolid):
            draw_disc(img, canvas, look, obj, look.wink_bgr[obj.colour])
        elif isinstance(obj, Distractor):
            _draw_distractor(img, canvas, look, obj)
        elif kind == "pot":
            _draw_pot(img, canvas, look, pot_rgb, pot_alpha, potted)
    if not np.all(look.light_bgr == 1.0):
        img *= look.light_bgr.astype(np.float32)[None, None, :]

    out = cv2.remap(
        img, canvas.map_x, canvas.map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT
    )
    return _camera_effects(out, cam, rng, noise_scale)


def _painter_order(
    layout: Layout, canvas: Canvas, squops: Mapping[str, Sequence[str]]
) -> list[tuple[str, WinkSolid | Distractor | None]]:
    """Far things first; a wink never before a wink it lies on.

    Depth alone fails for two tilted winks leaning on each other (the upper
    one's centre can be the lower), so winks in a pile are emitted only
    after everything they squop.
    """
    keyed: list[tuple[float, str, WinkSolid | Distractor | None]] = []
    for w in layout.winks:
        if w.placement == "potted":
            continue
        depth = float(canvas.depth(w.centre[None, :])[0])
        keyed.append((depth - 60.0 * w.centre[2], "wink", w))
    for d in layout.distractors:
        pt3 = np.array([d.centre_mm[0], d.centre_mm[1], d.base_z_mm + d.size_mm[2] / 2])
        keyed.append((float(canvas.depth(pt3[None, :])[0]) - 30.0 * d.size_mm[2], "d", d))
    keyed.sort(key=lambda it: -it[0])

    winks = {w.id: w for w in layout.winks if w.placement != "potted"}
    done: set[str] = set()
    order: list[tuple[str, WinkSolid | Distractor | None]] = []

    def emit(wid: str, path: tuple[str, ...] = ()) -> None:
        if wid in done or wid in path:
            return
        for low in squops.get(wid, ()):
            if low in winks:
                emit(low, (*path, wid))
        done.add(wid)
        order.append(("wink", winks[wid]))

    for _, kind, obj in keyed:
        if isinstance(obj, WinkSolid):
            emit(obj.id)
        else:
            order.append((kind, obj))
    if layout.mat_present:
        # The pot stands on the mat: it hides what stands behind its foot and
        # is hidden by what stands before it. The height bias above (meant
        # for winks among winks) would put a wink lying against the pot's
        # far side in front of it, painted on the pot's wall. Distance from
        # the eye, not along the optical axis: what matters is the line of
        # sight through the pot, which a wide or tilted view can turn.
        eye = canvas.position
        pot_distance = float(np.linalg.norm(eye))
        at = len(order)
        for k, (_, obj) in enumerate(order):
            foot = _foot_mm(obj)
            if foot is not None and float(np.linalg.norm(foot - eye)) < pot_distance:
                at = k
                break
        order.insert(at, ("pot", None))
    return order


def _foot_mm(obj: WinkSolid | Distractor | None) -> np.ndarray | None:
    """Where a wink or a piece of clutter meets what it stands on, (3,) mm."""
    if isinstance(obj, WinkSolid):
        return np.array([obj.centre[0], obj.centre[1], 0.0])
    if isinstance(obj, Distractor):
        return np.array([obj.centre_mm[0], obj.centre_mm[1], obj.base_z_mm])
    return None


def _draw_pot(
    img: F32,
    canvas: Canvas,
    look: Look,
    colour: np.ndarray,
    alpha: float,
    potted: list[WinkSolid],
) -> None:
    c = np.zeros(2)
    r_base, r_top = POT_BASE_DIAMETER_MM / 2, POT_TOP_DIAMETER_MM / 2
    interior = np.clip(colour * 0.45 + 0.05, 0, 1)
    draw_cone(img, canvas, look, c, 0.0, r_base, r_top, POT_HEIGHT_MM, colour, alpha, interior)
    if not potted:
        return
    # Potted winks show through the opening (and through a translucent wall).
    layer = img.copy()
    for w in sorted(potted, key=lambda w: w.centre[2]):
        draw_disc(layer, canvas, look, w, look.wink_bgr[w.colour] * 0.8, gloss=0.2)
    opening = canvas.project(_cylinder_ring(c, r_top - 1.5, POT_HEIGHT_MM, 96))
    mask = np.zeros(img.shape[:2], np.float32)
    _fill(mask[..., None], opening, np.array([1.0], np.float32))
    if alpha < 0.9:
        wall = canvas.project(
            np.vstack(
                [
                    _cylinder_ring(c, r_base, 0.0, 96),
                    _cylinder_ring(c, r_top, POT_HEIGHT_MM, 96),
                ]
            )
        )
        hull = cv2.convexHull(wall.astype(np.float32)).reshape(-1, 2).astype(np.float64)
        wall_mask = np.zeros(img.shape[:2], np.float32)
        _fill(wall_mask[..., None], hull, np.array([1.0 - alpha], np.float32))
        mask = np.maximum(mask, wall_mask)
    img[:] = img * (1 - mask[..., None]) + layer * mask[..., None]


def _draw_distractor(img: F32, canvas: Canvas, look: Look, d: Distractor) -> None:
    colour = np.asarray(d.colour_bgr, np.float64) / 255.0
    if d.kind == "squidger":
        disc = WinkSolid(
            id="squidger",
            colour=Colour.BLUE,
            size=WinkSize.LARGE,
            radius_mm=d.size_mm[0] / 2,
            thickness_mm=d.size_mm[2],
            bevel_mm=1.2,
            centre_mm=(d.centre_mm[0], d.centre_mm[1], d.base_z_mm + d.size_mm[2] / 2),
        )
        draw_disc(img, canvas, look, disc, colour, gloss=0.5, alpha=0.92)
    elif d.kind == "mug":
        r = d.size_mm[0] / 2
        draw_cone(
            img,
            canvas,
            look,
            np.asarray(d.centre_mm),
            d.base_z_mm,
            r * 0.92,
            r,
            d.size_mm[2],
            colour,
            1.0,
            np.clip(colour * 0.4, 0, 1),
        )
    else:
        draw_box(img, canvas, look, d)


def _depth_of_field(img: F32, cam: CameraModel) -> F32:
    """A phone's shallow focus: blur grows away from the focused depth of the mat.

    The blur circle of a lens focused at depth ``f`` on a point at depth
    ``d`` is proportional to ``|1 - f / d|``; with a phone's aperture and
    a 4032-px sensor it is about 27 px at ``|1 - f / d| = 1`` for a 25 cm
    focus, so a 45-degree shot is visibly soft at its near and far ends.
    """
    h, w = img.shape[:2]
    step = 16
    gx = np.arange(0, w + step, step, dtype=np.float64)
    gy = np.arange(0, h + step, step, dtype=np.float64)
    grid = np.stack(np.meshgrid(gx, gy), -1).reshape(-1, 2)
    norm = cam.undistort_image_points(grid)
    rays = np.hstack([norm, np.ones((len(norm), 1))]) @ cam.rotation  # world directions
    pos = cam.position_mm
    with np.errstate(divide="ignore", invalid="ignore"):
        depth = -pos[2] / rays[:, 2]  # z_cam of the mat point, ray has z_cam = 1
    depth = np.where(np.isfinite(depth) & (depth > 0), depth, np.nan)
    focus = float(np.nanmedian(depth[len(depth) // 2 - 3 : len(depth) // 2 + 3]))
    coc_px = 27.0 * (250.0 / focus) * np.abs(1.0 - focus / depth)
    coc_px = np.nan_to_num(coc_px, nan=12.0).reshape(len(gy), len(gx)).astype(np.float32)
    coc_full = _upsample_exact(coc_px.ravel(), len(gx), len(gy), step, w, h)
    blurred = cv2.GaussianBlur(img, (0, 0), 3.0)
    weight = np.clip(coc_full / 6.0, 0.0, 1.0)[..., None]
    return (img * (1 - weight) + blurred * weight).astype(np.float32)


def _camera_effects(
    img: F32, cam: CameraModel, rng: np.random.Generator, noise_scale: float
) -> np.ndarray:
    """Exposure, vignetting, lens blur, sensor noise; returns uint8 BGR."""
    h, w = img.shape[:2]
    k = cam.camera_matrix
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    r2 = ((xs - k[0, 2]) ** 2 + (ys - k[1, 2]) ** 2) / float(k[0, 0] ** 2)
    vignette = 1.0 / (1.0 + float(rng.uniform(0.15, 0.45)) * r2) ** 2
    img = img * vignette[..., None]
    white = rng.uniform(0.92, 1.08, 3).astype(np.float32)
    exposure = float(rng.uniform(0.7, 1.12))
    img = img * (white * exposure)[None, None, :]
    scale = w / 1920.0
    sigma = float(rng.uniform(0.5, 0.9)) * max(1.0, scale * 0.8)
    if scale > 1.5:
        img = _depth_of_field(img, cam)
    img = cv2.GaussianBlur(img, (0, 0), sigma)
    img = np.clip(img, 0, 1)
    # Shot noise grows with brightness; read noise is flat; some is chroma.
    level = float(rng.uniform(0.01, 0.04)) * noise_scale
    lum = rng.standard_normal((h, w, 1), dtype=np.float32)
    chroma = rng.standard_normal((h, w, 3), dtype=np.float32)
    noise: F32 = level * (0.7 * lum + 0.4 * chroma) * np.sqrt(0.3 + img)
    if scale > 1.5:
        # Phones denoise hard: what is left is faint and blotchy.
        noise = np.asarray(cv2.GaussianBlur(noise, (0, 0), 1.2)) * 1.2
    img = np.clip(img + noise, 0, 1)
    return (img * 255.0 + 0.5).astype(np.uint8)
