#!/usr/bin/python3
"""Writes the images the attachment and chat-store tests read (PIL from Debian)."""
from PIL import Image

# A 6x4 picture: red on the left half, blue on the right.
im = Image.new("RGB", (6, 4), (200, 30, 40))
for x in range(3, 6):
    for y in range(4):
        im.putpixel((x, y), (20, 60, 220))
im.save("red-blue-6x4.png", optimize=True)

# Stored 16x8 with EXIF orientation 6 ("rotate 90 degrees clockwise to show"):
# shown 8x16. The left (dark) square ends up on top.
side = Image.new("RGB", (16, 8), (240, 240, 240))
for x in range(8):
    for y in range(8):
        side.putpixel((x, y), (10, 10, 10))
exif = Image.Exif()
exif[0x0112] = 6
side.save("rotated-16x8-orientation6.jpg", quality=95, exif=exif.tobytes())

Image.new("RGB", (5, 7), (0, 128, 0)).save("green-5x7.gif")
Image.new("RGB", (3, 2), (1, 2, 3)).save("tiny-3x2.bmp")

# The first half of the PNG: a truncated file.
data = open("red-blue-6x4.png", "rb").read()
open("truncated.png", "wb").write(data[: len(data) // 2])

# A decompression bomb's header: a PNG that declares 100000 x 100000 pixels
# (30 GB decoded) in 69 bytes, with nothing to decode.
import struct, zlib


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


bomb = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0))
bomb += chunk(b"IDAT", zlib.compress(bytes(64))) + chunk(b"IEND", b"")
open("bomb-100000x100000.png", "wb").write(bomb)

# The JPEG cut before its end: decoders fill the rest with grey.
jpeg = open("rotated-16x8-orientation6.jpg", "rb").read()
open("truncated.jpg", "wb").write(jpeg[: len(jpeg) - 6])

# A PNG whose pixel data is overwritten (its checksums no longer match).
damaged = bytearray(data)
for i in range(45, 60):
    damaged[i] ^= 0x5A
open("corrupt.png", "wb").write(bytes(damaged))

# An icon: an image format Qt reads but a chat does not take.
Image.new("RGB", (16, 16), (9, 9, 9)).save("icon-16.ico")
