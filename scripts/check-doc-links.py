#!/usr/bin/env python3
"""Checks every relative link and image in the project's documentation.

    scripts/check-doc-links.py            README.md, docs/, bench/README.md, bench/notes/
    scripts/check-doc-links.py FILE...    only these Markdown files

A link's target is resolved against the folder of the file that holds it and
must exist; a link with a #fragment into a Markdown file (or into the file
itself) must name one of that file's headings, spelled as GitHub spells
heading anchors. Links to other sites (http:, https:, mailto:) are not
fetched. Text inside fenced code blocks and inline code is not read as links.
Prints one line per broken link and exits 1 when there is any, else prints
how many links were checked and exits 0.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# [text](target) and ![alt](target), the target up to whitespace or ")";
# <img src="..."> and <a href="...">.
MARKDOWN_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_LINK = re.compile(r"<(?:img|a)\b[^>]*?\b(?:src|href)=\"([^\"]+)\"", re.IGNORECASE)
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`+[^`]*`+")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def default_files():
    files = [ROOT / "README.md", ROOT / "bench" / "README.md"]
    files += sorted((ROOT / "docs").glob("**/*.md"))
    files += sorted((ROOT / "bench" / "notes").glob("*.md"))
    return [f for f in files if f.is_file()]


def prose(path):
    """The file's text with fenced code blocks and inline code blanked, its
    lines kept where they were (a link's text may run over a line break)."""
    lines = []
    in_fence = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            lines.append("")
        else:
            lines.append("" if in_fence else INLINE_CODE.sub("", line))
    return "\n".join(lines)


def github_slug(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped,
    spaces as hyphens (inline code and links count by their text)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


_anchor_cache = {}


def anchors(path):
    if path not in _anchor_cache:
        seen = {}
        found = set()
        in_fence = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            match = None if in_fence else HEADING.match(line)
            if not match:
                continue
            slug = github_slug(match.group(2))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
        _anchor_cache[path] = found
    return _anchor_cache[path]


def shown(path):
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def check(path):
    """Yields (line, target, problem) for each broken link; counts them all."""
    text = prose(path)
    for match in list(MARKDOWN_LINK.finditer(text)) + list(HTML_LINK.finditer(text)):
        target = match.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # another site, or mailto:
        number = text.count("\n", 0, match.start(1)) + 1
        file_part, _, fragment = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        check.count += 1
        if not resolved.exists():
            yield number, target, f"{shown(resolved)} does not exist"
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            yield number, target, f"no heading with the anchor #{fragment} in {shown(resolved)}"


check.count = 0


def main(argv):
    files = [Path(a).resolve() for a in argv[1:]] or default_files()
    broken = 0
    for path in files:
        for number, target, problem in check(path):
            broken += 1
            print(f"{shown(path)}:{number}: {target}: {problem}")
    if broken:
        print(f"{broken} broken link(s) of {check.count} in {len(files)} file(s)", file=sys.stderr)
        return 1
    print(f"{check.count} links in {len(files)} files resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
