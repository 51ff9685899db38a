#!/usr/bin/python3
"""Draws train.py's loss.csv: training loss per logging interval and the
validation loss, against tokens seen.

  /usr/bin/python3 plot_loss.py /work/demo-train/run/loss.csv loss.png

Uses matplotlib (Debian's python3-matplotlib) when it is installed; without
it, or for an output name ending in .svg, writes a plain SVG by hand.
"""

import csv
import sys
from pathlib import Path


def read(path):
    train, val = [], []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            tokens = int(row["tokens"]) / 1e6
            train.append((tokens, float(row["train_loss"])))
            if row["val_loss"]:
                val.append((tokens, float(row["val_loss"])))
    return train, val


def plot_matplotlib(train, val, out):
    import matplotlib
    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.plot(*zip(*train), label="training (assistant tokens)", linewidth=1)
    if val:
        ax.plot(*zip(*val), "o-", label="validation", markersize=3)
    ax.set_xlabel("tokens seen (millions)")
    ax.set_ylabel("cross-entropy (nats per token)")
    ax.set_title("Quire demo model")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out)


def plot_svg(train, val, out):
    width, height, margin = 700, 400, 50
    points = train + val
    x_max = max(x for x, _ in points) or 1.0
    y_min = min(y for _, y in points)
    y_max = max(y for _, y in points)

    def xy(x, y):
        px = margin + (width - 2 * margin) * x / x_max
        py = height - margin - (height - 2 * margin) * (y - y_min) / ((y_max - y_min) or 1.0)
        return f"{px:.1f},{py:.1f}"

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<line x1="{margin}" y1="{height - margin}" x2="{width - margin}" '
             f'y2="{height - margin}" stroke="black"/>',
             f'<line x1="{margin}" y1="{margin}" x2="{margin}" y2="{height - margin}" '
             f'stroke="black"/>',
             f'<text x="{width / 2}" y="{height - 15}" text-anchor="middle">'
             f'tokens seen (millions, up to {x_max:.1f})</text>',
             f'<text x="{margin}" y="{margin - 10}">loss {y_min:.2f} .. {y_max:.2f} '
             f'(blue: training, orange: validation)</text>']
    for series, colour in ((train, "#1f77b4"), (val, "#ff7f0e")):
        if series:
            path = " ".join(xy(x, y) for x, y in series)
            parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" '
                         f'points="{path}"/>')
    parts.append("</svg>")
    Path(out).write_text("\n".join(parts) + "\n")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_loss.py loss.csv OUT.png|OUT.svg")
    train, val = read(sys.argv[1])
    out = sys.argv[2]
    if not out.endswith(".svg"):
        try:
            plot_matplotlib(train, val, out)
            print(f"wrote {out}")
            return
        except ImportError:
            out = str(Path(out).with_suffix(".svg"))
    plot_svg(train, val, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
