#!/usr/bin/env python3
"""Static count of instructions per weight in the CUDA decode kernels' inner
loops, for every architecture a build targets.

Each source in kernels/cuda/probes/ (or --probes DIR) defines probe kernels,
extern "C" __global__, named quire_probe_<format>_<variant>_<bits>bit_<N>w
(quire_probe_exl2_half2_4bit_32w): each is ONE `#pragma unroll 1` loop whose
body is exactly one step of a product kernel's inner loop over N weights for
one input row. Every source is compiled to PTX (nvcc -arch=compute_XX -ptx)
and assembled (ptxas -arch=sm_XX -v, registers and spills), and the cubin
disassembled (cuobjdump -sass, else nvdisasm). In each probe the loop is the
span from the target of its backward branch to that branch (PTX: a
$L__BB label and the `bra` back to it; SASS: a BRA to an earlier address),
and its instructions are counted, the loop's own counter, compare and branch
included: PTX instruction statements (not directives, labels or braces),
SASS instructions but NOP. Divided by N they give instructions per weight.

Exit status 1 when
- a probe spills registers (spill stores or loads) on any architecture, or
- on sm_90, the leanest 4-bit probe (*_4bit_*) of a variant other than fp32,
  for each format, takes more than 2.0 PTX instructions per weight, or more
  than 2.0 SASS instructions where SASS is counted (the other variants are
  reported: they are what a GPU run compares the leanest with);
2 on a tool error (a compiler missing or failing, a probe without exactly
one loop, a probe name that does not follow the convention); else 0.
Without cuobjdump and nvdisasm (CUDA's bin folder or PATH) the SASS columns
read n/a and only PTX is held to the second rule, unless --require-sass.

Results are cached per (source, architecture), as cuda_resources.py does, in
$QUIRE_CUDA_INNER_LOOP_CACHE, else $XDG_CACHE_HOME/quire/cuda-inner-loop,
under a hash of this script, the tools' versions, the probes and every CUDA
source and header.

Usage: cuda_inner_loop.py [--arch 75,80,...] [--probes DIR] [--jobs N]
                          [--report FILE] [--require-sass]
"""

import argparse
import concurrent.futures
import hashlib
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_resources import DESKTOP, INCLUDES, ROOT, SOURCES, assembled, cached_results  # noqa: E402

PROBES = os.path.join(ROOT, "kernels", "cuda", "probes")
NAME = re.compile(r"^quire_probe_([a-z0-9]+)_([a-z0-9]+)_(\d+)bit_(\d+)w$")
SASS_LIMIT = 2.0  # instructions per weight, the leanest new 4-bit variant of a format on sm_90
SASS_LIMIT_ARCH = 90


class ToolError(Exception):
    pass


def find_tool(name, required=True):
    for folder in [os.environ.get("CUDA_HOME", "/usr/local/cuda") + "/bin"] + \
            os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(folder, name)
        if os.access(candidate, os.X_OK):
            return candidate
    if required:
        raise ToolError(f"{name} not found (CUDA's bin folder or PATH)")
    return None


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise ToolError(" ".join(command) + " failed:\n" + result.stderr[-4000:])
    return result.stdout + result.stderr


def loop_span(name, backward):
    """The one loop of a probe from its backward branches (target, branch)
    positions: nested branches back into one loop are one loop."""
    if not backward:
        raise ToolError(f"{name}: no loop (no backward branch)")
    spans = []
    for target, branch in sorted(backward):
        if spans and target <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], branch))
        else:
            spans.append((target, branch))
    if len(spans) > 1:
        raise ToolError(f"{name}: {len(spans)} loops; a probe holds exactly one")
    return spans[0]


def ptx_loops(ptx):
    """Probe name -> PTX instructions in its loop."""
    counts = {}
    entries = list(re.finditer(r"\.entry\s+(\w+)\s*\(", ptx))
    for index, entry in enumerate(entries):
        name = entry.group(1)
        end = entries[index + 1].start() if index + 1 < len(entries) else len(ptx)
        statements, labels, branches = [], {}, []
        for raw in ptx[entry.end():end].splitlines():
            line = raw.split("//")[0].strip()
            label = re.match(r"^(\$?[\w.$]+):$", line)
            if label:
                labels[label.group(1)] = len(statements)
                continue
            for part in line.split(";"):
                part = part.strip().strip("{}").strip()
                if not part or part.startswith("."):
                    continue
                branch = re.match(r"^(@!?%\w+\s+)?bra(\.uni)?\s+(\S+)$", part)
                if branch:
                    branches.append((len(statements), branch.group(3)))
                statements.append(part)
        backward = [(labels[target], at) for at, target in branches
                    if target in labels and labels[target] <= at]
        if not name.startswith("quire_probe_"):
            continue
        first, last = loop_span(name, backward)
        counts[name] = last - first + 1
    return counts


SASS_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def sass_loops(text):
    """Probe name -> SASS instructions (but NOP) in its loop, from
    `cuobjdump -sass` or `nvdisasm` output."""
    counts, functions, current = {}, {}, None
    for line in text.splitlines():
        header = re.search(r"Function\s*:\s*(\S+)", line) or \
            re.match(r"^\s*\.text\.(\S+):", line)
        if header:
            current = header.group(1)
            functions[current] = {"instructions": [], "labels": {}, "pending": []}
            continue
        if current is None:
            continue
        function = functions[current]
        label = re.match(r"^\s*(\.L_?\w+):", line)
        if label:
            function["pending"].append(label.group(1))
            continue
        instruction = SASS_LINE.search(line)
        if instruction:
            address = int(instruction.group(1), 16)
            for pending in function["pending"]:
                function["labels"][pending] = address
            function["pending"] = []
            function["instructions"].append((address, instruction.group(2)))
    for name, function in functions.items():
        if not name.startswith("quire_probe_"):
            continue
        backward = []
        for address, text in function["instructions"]:
            words = text.split()
            if words and words[0].startswith("@"):
                words = words[1:]
            if not words or not words[0].startswith("BRA"):
                continue
            target = None
            label = re.search(r"`\((\.L_?\w+)\)", text)
            if label:
                target = function["labels"].get(label.group(1))
            else:
                number = re.search(r"0x([0-9a-f]+)", " ".join(words[1:]))
                target = int(number.group(1), 16) if number else None
            # The BRA to itself after EXIT only parks the warp.
            if target is not None and target < address:
                backward.append((target, address))
        first, last = loop_span(name, backward)
        counts[name] = sum(1 for address, text in function["instructions"]
                           if first <= address <= last and
                           not re.match(r"^(@!?\w+\s+)?NOP\b", text))
    return counts


def check_source(tools, source, arch, scratch):
    stem = os.path.join(scratch, f"{os.path.basename(source)}.{arch}")
    run([tools["nvcc"], "-std=c++17", "-O3", *[f"-I{i}" for i in INCLUDES], f"-I{SOURCES}",
         f"-arch=compute_{arch}", "-ptx", source, "-o", stem + ".ptx"])
    with open(stem + ".ptx") as ptx:
        ptx_counts = ptx_loops(ptx.read())
    resources = assembled(run([tools["ptxas"], f"-arch=sm_{arch}", "-O3", "-v", stem + ".ptx",
                               "-o", stem + ".cubin"]))
    sass_counts = {}
    if tools.get("cuobjdump"):
        sass_counts = sass_loops(run([tools["cuobjdump"], "-sass", stem + ".cubin"]))
    elif tools.get("nvdisasm"):
        sass_counts = sass_loops(run([tools["nvdisasm"], stem + ".cubin"]))
    for suffix in (".ptx", ".cubin"):
        os.remove(stem + suffix)
    return [(arch, name, ptx_counts[name], sass_counts.get(name), resources.get(name, {}))
            for name in sorted(ptx_counts)]


def cache_folder():
    folder = os.environ.get("QUIRE_CUDA_INNER_LOOP_CACHE")
    if not folder:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "quire", "cuda-inner-loop")
    return folder


def inputs_hash(tools, probes):
    digest = hashlib.sha256()
    for script in (os.path.abspath(__file__),
                   os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda_resources.py")):
        with open(script, "rb") as f:
            digest.update(f.read())
    for tool in ("nvcc", "cuobjdump", "nvdisasm"):
        digest.update(f"{tool}:{tools.get(tool)}".encode())
    digest.update(run([tools["nvcc"], "--version"]).encode())
    for folder in [probes, SOURCES] + INCLUDES:
        for base, _, files in sorted(os.walk(folder)):
            for name in sorted(files):
                path = os.path.join(base, name)
                digest.update(path.encode())
                with open(path, "rb") as f:
                    digest.update(f.read())
    return digest.hexdigest()[:24]


def check_source_cached(tools, source, arch, scratch, key):
    return cached_results(cache_folder(), key, source, arch,
                          lambda: check_source(tools, source, arch, scratch))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default=",".join(map(str, DESKTOP)))
    parser.add_argument("--probes", default=PROBES, help="folder of probe sources (*.cu)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--report", help="also write the table to this file")
    parser.add_argument("--require-sass", action="store_true",
                        help="a missing disassembler is a tool error")
    args = parser.parse_args()
    architectures = [int(a) for a in args.arch.split(",") if a]
    try:
        tools = {"nvcc": find_tool("nvcc"), "ptxas": find_tool("ptxas"),
                 "cuobjdump": find_tool("cuobjdump", False),
                 "nvdisasm": find_tool("nvdisasm", False)}
        if args.require_sass and not (tools["cuobjdump"] or tools["nvdisasm"]):
            raise ToolError("neither cuobjdump nor nvdisasm found (CUDA's bin folder or PATH)")
        if not os.path.isdir(args.probes):
            raise ToolError(f"no probe folder {args.probes}")
        sources = sorted(os.path.join(args.probes, f) for f in os.listdir(args.probes)
                         if f.endswith(".cu"))
        if not sources:
            raise ToolError(f"no probe sources (*.cu) in {args.probes}")
        results = []
        with tempfile.TemporaryDirectory() as scratch, \
                concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            key = inputs_hash(tools, args.probes)
            jobs = [pool.submit(check_source_cached, tools, s, a, scratch, key)
                    for s in sources for a in architectures]
            for job in jobs:
                results.extend(job.result())
        if not results:
            raise ToolError(f"no kernel named quire_probe_* in {args.probes}")
        for _, name, _, _, _ in results:
            if not NAME.match(name):
                raise ToolError(f"{name}: not quire_probe_<format>_<variant>_<bits>bit_<N>w")
    except ToolError as error:
        print(f"cuda_inner_loop.py: {error}", file=sys.stderr)
        return 2

    problems = []
    lines = ["| arch | probe | PTX / weight | SASS / weight | registers | spill stores/loads |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    leanest = {}  # format -> the fewest PTX and SASS per weight of its new 4-bit variants
    for arch, name, ptx, sass, n in sorted(results, key=lambda r: (r[0], r[1])):
        form, variant, bits, weights = NAME.match(name).groups()
        weights = int(weights)
        sass_text = "n/a" if sass is None else f"{sass / weights:.2f}"
        stores, loads = n.get("spill_stores", 0), n.get("spill_loads", 0)
        lines.append(f"| sm_{arch} | `{name}` | {ptx / weights:.2f} | {sass_text} | "
                     f"{n.get('registers', '-')} | {stores}/{loads} |")
        if stores or loads:
            problems.append(f"sm_{arch} {name}: spills ({stores} bytes stored, {loads} loaded, "
                            f"{n.get('registers')} registers)")
        if arch == SASS_LIMIT_ARCH and bits == "4" and variant != "fp32":
            best = leanest.setdefault(form, {"ptx": None, "sass": None})
            for kind, count in (("ptx", ptx), ("sass", sass)):
                if count is not None and (best[kind] is None or count / weights < best[kind][0]):
                    best[kind] = (count / weights, name)
    for form, best in sorted(leanest.items()):
        for kind in ("ptx", "sass"):
            if best[kind] is not None and best[kind][0] > SASS_LIMIT:
                problems.append(f"sm_{SASS_LIMIT_ARCH} {form}: the leanest 4-bit variant "
                                f"({best[kind][1]}) takes {best[kind][0]:.2f} {kind.upper()} "
                                f"instructions per weight > {SASS_LIMIT}")
    table = "\n".join(lines)
    if args.report:
        with open(args.report, "w") as report:
            report.write(table + "\n")
    print(table)
    if not (tools["cuobjdump"] or tools["nvdisasm"]):
        print("SASS not counted: neither cuobjdump nor nvdisasm found, so only PTX was held "
              f"to {SASS_LIMIT} per weight on sm_{SASS_LIMIT_ARCH}")
    for line in problems:
        print(f"PROBLEM: {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
