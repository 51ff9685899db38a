#!/usr/bin/python3
"""Reference image preprocessing, independent of Quire's code.

Follows transformers' slow (NumPy + PIL) image processors: image_utils'
load_image (EXIF orientation through ImageOps.exif_transpose),
image_transforms.convert_to_rgb (alpha composited over opaque white),
image_transforms.resize (PIL's Image.resize on the uint8 image), rescale
(a double product stored as float32) and normalize (float32), and the
processors' own steps: Gemma3ImageProcessor (fixed size, pan and scan),
Qwen2VLImageProcessor (smart_resize, patches) and PixtralImageProcessor
(longest edge, whole patches), with their processors' image token strings.

Images are always channels-last here: transformers infers the channel axis
from the array's shape, and guesses wrong for images 1 or 3 pixels high;
the processors are given input_data_format=LAST for those.

Usage (run with /usr/bin/python3: Debian's python3-numpy and python3-pil):
  reference_image_preprocess.py preprocess OUTDIR
      writes OUTDIR/models/<model>/ (the configurations), OUTDIR/inputs/
      (<case>.rgb, raw RGB), OUTDIR/out/<model>/<case>.resized (the uint8
      images after resizing, one after the other) and .pixels (float32,
      little-endian), OUTDIR/resize/ (PIL's resize with each filter), and
      OUTDIR/manifest.json describing them.
  reference_image_preprocess.py decode OUTDIR
      writes encoded images (PNG, JPEG, WebP, GIF, BMP; grayscale,
      palette, transparent, EXIF-rotated, animated) to OUTDIR/files/, PIL's decoding of each
      to OUTDIR/files/<name>.rgb and OUTDIR/decode.json.
"""
import io
import json
import math
import os
import sys

import numpy as np
from PIL import Image, ImageOps

BILINEAR, BICUBIC = 2, 3
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]

# Configurations as the published model repositories hold them (the
# processors' defaults where a file leaves a value out or null).
MODELS = {
    "gemma3": {
        "preprocessor_config.json": {
            "image_processor_type": "Gemma3ImageProcessor", "processor_class": "Gemma3Processor",
            "do_convert_rgb": None, "do_normalize": True, "do_pan_and_scan": None,
            "do_rescale": True, "do_resize": True, "image_mean": [0.5, 0.5, 0.5],
            "image_std": [0.5, 0.5, 0.5], "image_seq_length": 256,
            "pan_and_scan_max_num_crops": None, "pan_and_scan_min_crop_size": None,
            "pan_and_scan_min_ratio_to_activate": None, "resample": BILINEAR,
            "rescale_factor": 0.00392156862745098, "size": {"height": 896, "width": 896}},
        "processor_config.json": {"image_seq_length": 256, "processor_class": "Gemma3Processor"},
    },
    "gemma3_pan_and_scan": {
        "preprocessor_config.json": {
            "image_processor_type": "Gemma3ImageProcessor", "do_pan_and_scan": True,
            "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "resample": BILINEAR,
            "rescale_factor": 0.00392156862745098, "size": {"height": 896, "width": 896}},
        "processor_config.json": {"image_seq_length": 256},
    },
    "qwen2_5_vl": {
        "preprocessor_config.json": {
            "image_processor_type": "Qwen2_5_VLImageProcessor", "processor_class": "Qwen2_5_VLProcessor",
            "do_convert_rgb": True, "do_normalize": True, "do_rescale": True, "do_resize": True,
            "image_mean": CLIP_MEAN, "image_std": CLIP_STD, "max_pixels": 12845056,
            "merge_size": 2, "min_pixels": 3136, "patch_size": 14, "resample": BICUBIC,
            "rescale_factor": 0.00392156862745098, "temporal_patch_size": 2},
    },
    "qwen3_vl": {
        "preprocessor_config.json": {
            "image_processor_type": "Qwen2VLImageProcessorFast", "processor_class": "Qwen3VLProcessor",
            "size": {"longest_edge": 16777216, "shortest_edge": 65536}, "patch_size": 16,
            "temporal_patch_size": 2, "merge_size": 2, "image_mean": [0.5, 0.5, 0.5],
            "image_std": [0.5, 0.5, 0.5]},
    },
    "pixtral": {
        "preprocessor_config.json": {
            "image_processor_type": "PixtralImageProcessor", "processor_class": "PixtralProcessor",
            "do_convert_rgb": True, "do_normalize": True, "do_rescale": True, "do_resize": True,
            "image_mean": CLIP_MEAN, "image_std": CLIP_STD, "patch_size": {"height": 16, "width": 16},
            "resample": BICUBIC, "rescale_factor": 0.00392156862745098, "size": {"longest_edge": 1024}},
        "processor_config.json": {
            "image_break_token": "[IMG_BREAK]", "image_end_token": "[IMG_END]",
            "image_token": "[IMG]", "patch_size": 16, "processor_class": "PixtralProcessor"},
    },
    "mistral_small_3_1": {
        "preprocessor_config.json": {
            "image_processor_type": "PixtralImageProcessor", "do_convert_rgb": None,
            "image_mean": CLIP_MEAN, "image_std": CLIP_STD, "patch_size": {"height": 14, "width": 14},
            "resample": BICUBIC, "rescale_factor": 0.00392156862745098, "size": {"longest_edge": 1540}},
        "processor_config.json": {
            "image_break_token": "[IMG_BREAK]", "image_end_token": "[IMG_END]",
            "image_token": "[IMG]", "patch_size": 14, "spatial_merge_size": 2},
    },
}


def value(config, key, default):
    found = config.get(key)
    return default if found is None else found


# --- transformers' shared steps ------------------------------------------


def convert_to_rgb(image):
    """image_transforms.convert_to_rgb."""
    if image.mode == "RGB":
        return image
    rgba = image.convert("RGBA")
    background = Image.new("RGBA", rgba.size, (255, 255, 255))
    return Image.alpha_composite(background, rgba).convert("RGB")


def load(data):
    """load_image's EXIF transpose, then convert_to_rgb."""
    image = Image.open(io.BytesIO(data))
    image = ImageOps.exif_transpose(image)
    return convert_to_rgb(image)


def resize(array, height, width, resample):
    """image_transforms.resize: PIL's resize of the uint8 image."""
    if array.shape[0] == height and array.shape[1] == width:
        return array.copy()
    image = Image.fromarray(array, "RGB")
    return np.array(image.resize((width, height), resample=resample, reducing_gap=None))


def rescale_normalize(array, config):
    """rescale (float64 product, stored float32) then normalize (float32)."""
    image = array
    if value(config, "do_rescale", True):
        scale = value(config, "rescale_factor", 1 / 255)
        image = (image.astype(np.float64) * scale).astype(np.float32)
    if value(config, "do_normalize", True):
        if not np.issubdtype(image.dtype, np.floating):
            image = image.astype(np.float32)
        mean = np.array(config["mean"], dtype=image.dtype)
        std = np.array(config["std"], dtype=image.dtype)
        image = (image - mean) / std
    return image.transpose(2, 0, 1)  # channels first


# --- Gemma 3 --------------------------------------------------------------


def crops_along(long_side, short_side, min_crop, max_crops):
    """The aspect ratio rounded half up, at most as many crops as fit the
    minimum crop size, within [2, max_crops]."""
    count = int(math.floor(long_side / short_side + 0.5))
    count = min(int(math.floor(long_side / min_crop)), count)
    return min(max_crops, max(2, count))


def pan_and_scan(array, config):
    height, width = array.shape[:2]
    min_crop = value(config, "pan_and_scan_min_crop_size", 256)
    max_crops = value(config, "pan_and_scan_max_num_crops", 4)
    min_ratio = value(config, "pan_and_scan_min_ratio_to_activate", 1.2)
    if width >= height:
        if width / height < min_ratio:
            return []
        num_w, num_h = crops_along(width, height, min_crop, max_crops), 1
    else:
        if height / width < min_ratio:
            return []
        num_w, num_h = 1, crops_along(height, width, min_crop, max_crops)
    crop_w = int(math.ceil(width / num_w))
    crop_h = int(math.ceil(height / num_h))
    if min(crop_w, crop_h) < min_crop:
        return []
    return [array[y:y + crop_h, x:x + crop_w]
            for y in [crop_h * i for i in range(num_h)]
            for x in [crop_w * i for i in range(num_w)]]


def gemma3(array, config, processor):
    crops = pan_and_scan(array, config) if value(config, "do_pan_and_scan", False) else []
    height, width = config["size"]["height"], config["size"]["width"]
    resized = [resize(image, height, width, value(config, "resample", BILINEAR))
               for image in [array] + crops]
    pixels = np.stack([rescale_normalize(image, config) for image in resized])
    seq_length = value(processor, "image_seq_length", value(config, "image_seq_length", 256))
    full = "\n\n<start_of_image>" + "<image_soft_token>" * seq_length + "<end_of_image>\n\n"
    if crops:
        text = (f"Here is the original image {full} and here are some crops to help you see better "
                + " ".join([full] * len(crops)))
    else:
        text = full
    return {"resized": resized, "pixels": pixels, "num_crops": len(crops), "text": text,
            "image_positions": text.count("<image_soft_token>")}


# --- Qwen2-VL, Qwen2.5-VL, Qwen3-VL ---------------------------------------


def smart_resize(height, width, factor, min_pixels, max_pixels):
    if max(height, width) / min(height, width) > 200:
        raise ValueError("absolute aspect ratio must be smaller than 200")
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def qwen2vl(array, config, processor):
    size = config.get("size") or {}
    min_pixels = value(config, "min_pixels", size.get("shortest_edge", 56 * 56))
    max_pixels = value(config, "max_pixels", size.get("longest_edge", 28 * 28 * 1280))
    patch = value(config, "patch_size", 14)
    temporal = value(config, "temporal_patch_size", 2)
    merge = value(config, "merge_size", 2)
    height, width = smart_resize(array.shape[0], array.shape[1], patch * merge, min_pixels, max_pixels)
    resized = resize(array, height, width, value(config, "resample", BICUBIC))
    patches = np.array([rescale_normalize(resized, config)])
    if patches.shape[0] % temporal != 0:
        repeats = np.repeat(patches[-1][np.newaxis], temporal - patches.shape[0] % temporal, axis=0)
        patches = np.concatenate([patches, repeats], axis=0)
    channel = patches.shape[1]
    grid_t = patches.shape[0] // temporal
    grid_h, grid_w = height // patch, width // patch
    patches = patches.reshape(grid_t, temporal, channel, grid_h // merge, merge, patch,
                              grid_w // merge, merge, patch)
    patches = patches.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
    flat = patches.reshape(grid_t * grid_h * grid_w, channel * temporal * patch * patch)
    count = grid_t * grid_h * grid_w // merge ** 2
    text = "<|vision_start|>" + "<|image_pad|>" * count + "<|vision_end|>"
    return {"resized": [resized], "pixels": flat, "grid_thw": [grid_t, grid_h, grid_w],
            "text": text, "image_positions": count}


# --- Pixtral, Mistral Small 3.x -------------------------------------------


def pixtral(array, config, processor):
    size = config["size"]
    if "longest_edge" in size:
        max_height = max_width = size["longest_edge"]
    else:
        max_height, max_width = size["height"], size["width"]
    # PixtralProcessor passes patch_size * spatial_merge_size.
    patch = value(processor, "patch_size", 16) * value(processor, "spatial_merge_size", 1)
    height, width = array.shape[:2]
    ratio = max(height / max_height, width / max_width)
    if ratio > 1:
        height = int(math.floor(height / ratio))
        width = int(math.floor(width / ratio))
    rows = (height - 1) // patch + 1
    columns = (width - 1) // patch + 1
    resized = resize(array, rows * patch, columns * patch, value(config, "resample", BICUBIC))
    tokens = [["[IMG]"] * columns + ["[IMG_BREAK]"]] * rows
    tokens = [token for row in tokens for token in row]
    tokens[-1] = "[IMG_END]"
    return {"resized": [resized], "pixels": rescale_normalize(resized, config),
            "text": "".join(tokens), "image_positions": rows * columns}


PROCESSORS = {"gemma3": gemma3, "gemma3_pan_and_scan": gemma3, "qwen2_5_vl": qwen2vl,
              "qwen3_vl": qwen2vl, "pixtral": pixtral, "mistral_small_3_1": pixtral}


# --- inputs ---------------------------------------------------------------


def synthetic(width, height, seed):
    """Smooth gradients, hard edges and noise: every rounding path."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    image = np.empty((height, width, 3), np.float64)
    image[..., 0] = 255 * x / max(width - 1, 1)
    image[..., 1] = 255 * y / max(height - 1, 1)
    image[..., 2] = np.where((x // 5 + y // 7) % 2 == 0, 255, 0)
    noisy = rng.random((height, width)) < 0.3
    image[noisy] = rng.integers(0, 256, (int(noisy.sum()), 3))
    return image.astype(np.uint8)


SIZES = [(1, 1), (3, 517), (517, 3), (1000, 7), (2000, 1500), (64, 48), (1600, 400), (300, 1000),
         (896, 896), (28, 28), (1200, 4)]
# The decoded samples are small; three models are enough to see them through.
DECODED_FOR = ("gemma3", "qwen2_5_vl", "pixtral")


def encoded_samples():
    """Encoded images of every kind the decoder must handle: name, bytes."""
    base = Image.fromarray(synthetic(37, 23, 7), "RGB")
    samples = {}

    def save(name, image, fmt, **options):
        buffer = io.BytesIO()
        image.save(buffer, fmt, **options)
        samples[name] = buffer.getvalue()

    save("rgb.png", base, "PNG")
    save("gray.png", base.convert("L"), "PNG")
    save("gray_alpha.png", Image.merge("LA", (base.convert("L"), base.getchannel("R"))), "PNG")
    save("palette.png", base.convert("P", palette=Image.ADAPTIVE, colors=16), "PNG")
    palette = base.convert("P", palette=Image.ADAPTIVE, colors=16)
    save("palette_transparent.png", palette, "PNG", transparency=3)
    rgba = base.copy()
    rgba.putalpha(Image.fromarray(synthetic(37, 23, 8)[..., 0]))
    save("rgba.png", rgba, "PNG")
    # Every value under every alpha: PIL's compositing arithmetic, whole.
    ramp = np.zeros((256, 256, 4), np.uint8)
    ramp[..., 0] = np.arange(256)[None, :]
    ramp[..., 1] = 255 - np.arange(256)[None, :]
    ramp[..., 2] = np.arange(256)[None, :] // 2
    ramp[..., 3] = np.arange(256)[:, None]
    save("alpha_ramp.png", Image.fromarray(ramp, "RGBA"), "PNG")
    save("rgb.jpg", base, "JPEG", quality=90)
    save("gray.jpg", base.convert("L"), "JPEG", quality=90)
    save("progressive.jpg", base, "JPEG", quality=75, progressive=True)
    save("rgb444.jpg", base, "JPEG", quality=95, subsampling=0)
    for orientation in range(1, 9):
        exif = Image.Exif()
        exif[0x0112] = orientation
        save(f"exif_{orientation}.jpg", base, "JPEG", quality=90, exif=exif.tobytes())
    save("lossless.webp", base, "WEBP", lossless=True)
    save("lossless_alpha.webp", rgba, "WEBP", lossless=True)
    save("lossy.webp", base, "WEBP", quality=80)
    # GIF: palette images, one with a transparent index, and an animation
    # (load_image, like Qt's reader, takes its first frame).
    save("palette.gif", palette, "GIF")
    save("palette_transparent.gif", palette, "GIF", transparency=3)
    save("gray.gif", base.convert("L"), "GIF")
    second = Image.fromarray(synthetic(37, 23, 9), "RGB").convert("P", palette=Image.ADAPTIVE,
                                                                    colors=16)
    save("animated.gif", palette, "GIF", save_all=True, append_images=[second], duration=100,
         loop=0)
    save("rgb.bmp", base, "BMP")
    save("gray.bmp", base.convert("L"), "BMP")
    save("palette.bmp", palette, "BMP")
    save("one_bit.bmp", base.convert("1"), "BMP")
    return samples


def write_raw(path, array):
    with open(path, "wb") as out:
        out.write(np.ascontiguousarray(array).tobytes())


def preprocess(outdir):
    for model, files in MODELS.items():
        os.makedirs(os.path.join(outdir, "models", model), exist_ok=True)
        for name, content in files.items():
            with open(os.path.join(outdir, "models", model, name), "w") as out:
                json.dump(content, out)
    os.makedirs(os.path.join(outdir, "inputs"), exist_ok=True)
    cases = {}
    for index, (width, height) in enumerate(SIZES):
        cases[f"synthetic_{width}x{height}"] = synthetic(width, height, index)
    for name, data in encoded_samples().items():
        if name.startswith(("gray", "palette", "rgba", "exif_6", "lossless_alpha")):
            cases["decoded_" + name.replace(".", "_")] = np.array(load(data))
    manifest = {"cases": [], "results": {}}
    for name, array in cases.items():
        write_raw(os.path.join(outdir, "inputs", name + ".rgb"), array)
        manifest["cases"].append({"name": name, "width": array.shape[1], "height": array.shape[0]})
    for model, files in MODELS.items():
        config = dict(files["preprocessor_config.json"])
        default_mean = [0.5] * 3 if model.startswith("gemma3") else CLIP_MEAN
        default_std = [0.5] * 3 if model.startswith("gemma3") else CLIP_STD
        config["mean"] = value(config, "image_mean", default_mean)
        config["std"] = value(config, "image_std", default_std)
        processor = files.get("processor_config.json", {})
        os.makedirs(os.path.join(outdir, "out", model), exist_ok=True)
        results = {}
        for name, array in cases.items():
            if name.startswith("decoded_") and model not in DECODED_FOR:
                continue
            try:
                result = PROCESSORS[model](array, config, processor)
            except ValueError as error:
                results[name] = {"error": str(error)}
                continue
            stem = os.path.join(outdir, "out", model, name)
            write_raw(stem + ".resized", np.concatenate([r.reshape(-1) for r in result["resized"]]))
            write_raw(stem + ".pixels", result["pixels"].astype("<f4"))
            results[name] = {
                "resized": [[r.shape[1], r.shape[0]] for r in result["resized"]],
                "shape": list(result["pixels"].shape),
                "grid_thw": result.get("grid_thw", [0, 0, 0]),
                "num_crops": result.get("num_crops", 0),
                "text": result["text"],
                "image_positions": result["image_positions"],
            }
        manifest["results"][model] = results
    # Every PIL filter, down and up, on its own.
    os.makedirs(os.path.join(outdir, "resize"), exist_ok=True)
    manifest["resize"] = []
    for name in ("synthetic_64x48", "synthetic_517x3"):
        image = Image.fromarray(cases[name], "RGB")
        for width, height in ((13, 200), (200, 13), (64, 10), (5, 5)):
            for resample in (1, 2, 3, 4, 5):
                resized = np.array(image.resize((width, height), resample=resample, reducing_gap=None))
                out = f"{name}_{width}x{height}_{resample}"
                write_raw(os.path.join(outdir, "resize", out + ".rgb"), resized)
                manifest["resize"].append({"case": name, "width": width, "height": height,
                                           "resample": resample, "file": out + ".rgb"})
    with open(os.path.join(outdir, "manifest.json"), "w") as out:
        json.dump(manifest, out)


def decode(outdir):
    os.makedirs(os.path.join(outdir, "files"), exist_ok=True)
    entries = []
    for name, data in encoded_samples().items():
        path = os.path.join(outdir, "files", name)
        with open(path, "wb") as out:
            out.write(data)
        array = np.array(load(data))
        write_raw(path + ".rgb", array)
        entries.append({"name": name, "width": array.shape[1], "height": array.shape[0]})
    with open(os.path.join(outdir, "decode.json"), "w") as out:
        json.dump({"files": entries}, out)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("preprocess", "decode"):
        sys.exit(__doc__)
    (preprocess if sys.argv[1] == "preprocess" else decode)(sys.argv[2])


if __name__ == "__main__":
    main()
