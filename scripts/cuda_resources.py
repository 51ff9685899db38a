#!/usr/bin/env python3
"""Static resource check of the CUDA kernels, for every architecture a build
targets: compiles each kernels/cuda/src/*.cu to PTX for the architecture,
assembles it with `ptxas -v`, and checks for every kernel that

- it declares its largest block (`__launch_bounds__`, the PTX's .maxntid),
  the launch configuration its host code uses;
- registers x that block fit the 64 K registers of one block;
- its static shared memory fits the 48 KiB a block gets without asking
  (dynamic shared memory beyond that is checked at compile time, next to the
  launch that asks for it: attention_tile.cuh).

Spills (local memory traffic) and stack frames are reported, not failed: a
spill costs bandwidth, and whether it matters is a question for a GPU.

Assembling every kernel for seven architectures takes minutes, so each
(source, architecture) result is kept in a cache folder
($QUIRE_CUDA_RESOURCES_CACHE, else $XDG_CACHE_HOME/quire/cuda-resources), under
a hash of this script, the compiler's version and every CUDA source and
header: any change to them checks again.

Usage: cuda_resources.py [--arch 75,80,...] [--jobs N] [--report FILE]
Exit status 0 when every kernel fits, 1 when one does not, 2 on a tool error.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = os.path.join(ROOT, "kernels", "cuda", "src")
INCLUDES = [os.path.join(ROOT, "kernels", "cuda", "include"),
            os.path.join(ROOT, "kernels", "common", "include")]
# The architectures the release package is built for (cmake/QuireCuda.cmake).
DESKTOP = [75, 80, 86, 89, 90, 100, 120]
REGISTERS_PER_BLOCK = 64 * 1024
STATIC_SHARED_LIMIT = 48 * 1024


def find_tool(name):
    for folder in [os.environ.get("CUDA_HOME", "/usr/local/cuda") + "/bin"] + \
            os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(folder, name)
        if os.access(candidate, os.X_OK):
            return candidate
    sys.exit(f"cuda_resources.py: {name} not found (CUDA's bin folder or PATH)")


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(" ".join(command) + " failed:\n" + result.stderr[-4000:])
    return result.stdout + result.stderr


def block_limits(ptx):
    """Kernel name -> threads per block from .maxntid (None when absent)."""
    limits = {}
    for match in re.finditer(r"\.entry\s+(\S+?)\((.*?)\{", ptx, re.S):
        # "256, 1, 1", or "256" alone in the PTX of newer architectures.
        bounds = re.search(r"\.maxntid\s+(\d+)(?:,\s*(\d+))?(?:,\s*(\d+))?", match.group(2))
        threads = None
        if bounds:
            threads = 1
            for dimension in bounds.groups():
                threads *= int(dimension or 1)
        limits[match.group(1)] = threads
    return limits


def assembled(report):
    """Kernel name -> registers, shared bytes, stack, spill stores and loads."""
    kernels, current = {}, None
    for line in report.splitlines():
        entry = re.search(r"Compiling entry function '(\S+)'", line)
        if entry:
            current = entry.group(1)
            kernels[current] = {"registers": 0, "shared": 0, "stack": 0, "spill_stores": 0,
                                "spill_loads": 0}
            continue
        if current is None:
            continue
        frame = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                          r"(\d+) bytes spill loads", line)
        if frame:
            kernels[current].update(stack=int(frame.group(1)), spill_stores=int(frame.group(2)),
                                    spill_loads=int(frame.group(3)))
        used = re.search(r"Used (\d+) registers", line)
        if used:
            kernels[current]["registers"] = int(used.group(1))
            shared = re.search(r"(\d+) bytes smem", line)
            kernels[current]["shared"] = int(shared.group(1)) if shared else 0
    return kernels


def cache_folder():
    folder = os.environ.get("QUIRE_CUDA_RESOURCES_CACHE")
    if not folder:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "quire", "cuda-resources")
    return folder


def inputs_hash(nvcc):
    """What the results depend on: this script, nvcc's version, every source
    and header the kernels can include."""
    digest = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as script:
        digest.update(script.read())
    digest.update(run([nvcc, "--version"]).encode())
    for folder in [SOURCES] + INCLUDES:
        for base, _, files in sorted(os.walk(folder)):
            for name in sorted(files):
                path = os.path.join(base, name)
                digest.update(os.path.relpath(path, ROOT).encode())
                with open(path, "rb") as f:
                    digest.update(f.read())
    return digest.hexdigest()[:24]


def check_source_cached(nvcc, ptxas, source, arch, scratch, key):
    return cached_results(cache_folder(), key, source, arch,
                          lambda: check_source(nvcc, ptxas, source, arch, scratch))


def cached_results(folder, key, source, arch, compute):
    """compute()'s list of tuples for (source, arch), kept in `folder` under
    `key` (a hash of everything the results depend on)."""
    path = os.path.join(folder, f"{key}-{os.path.basename(source)}-{arch}.json")
    try:
        with open(path) as cached:
            return [tuple(entry) for entry in json.load(cached)]
    except (OSError, ValueError):
        pass
    results = compute()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".tmp", "w") as out:
            json.dump(results, out)
        os.replace(path + ".tmp", path)
    except OSError:
        pass  # a read-only cache only costs time
    return results


def check_source(nvcc, ptxas, source, arch, scratch):
    ptx_file = os.path.join(scratch, f"{os.path.basename(source)}.{arch}.ptx")
    run([nvcc, "-std=c++17", "-O3", *[f"-I{i}" for i in INCLUDES], f"-arch=compute_{arch}",
         "-ptx", source, "-o", ptx_file])
    with open(ptx_file) as ptx:
        limits = block_limits(ptx.read())
    kernels = assembled(run([ptxas, f"-arch=sm_{arch}", "-O3", "-v", ptx_file, "-o", os.devnull]))
    os.remove(ptx_file)
    return [(arch, name, limits.get(name), numbers) for name, numbers in kernels.items()]


def demangle(names):
    if not names:
        return {}
    output = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                            text=True).stdout.splitlines()
    return dict(zip(names, output)) if len(output) == len(names) else {n: n for n in names}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default=",".join(map(str, DESKTOP)))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--report", help="also write the table to this file")
    args = parser.parse_args()
    architectures = [int(a) for a in args.arch.split(",") if a]
    nvcc, ptxas = find_tool("nvcc"), find_tool("ptxas")
    sources = sorted(os.path.join(SOURCES, f) for f in os.listdir(SOURCES) if f.endswith(".cu"))

    results = []
    with tempfile.TemporaryDirectory() as scratch, \
            concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        # The slowest sources first, so the pool ends together.
        key = inputs_hash(nvcc)
        jobs = [pool.submit(check_source_cached, nvcc, ptxas, s, a, scratch, key)
                for s in sorted(sources, key=lambda s: -os.path.getsize(s))
                for a in architectures]
        try:
            for job in jobs:
                results.extend(job.result())
        except RuntimeError as error:
            print(f"cuda_resources.py: {error}", file=sys.stderr)
            return 2

    names = demangle(sorted({name for _, name, _, _ in results}))
    problems, spills, lines = [], [], []
    lines.append("| arch | kernel | block | registers | static shared | stack | spill stores/loads |")
    lines.append("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for arch, name, block, n in sorted(results, key=lambda r: (r[0], names[r[1]])):
        readable = names[name]
        lines.append(f"| sm_{arch} | `{readable}` | {block or '-'} | {n['registers']} | "
                     f"{n['shared']} | {n['stack']} | {n['spill_stores']}/{n['spill_loads']} |")
        where = f"sm_{arch} {readable}"
        if block is None:
            problems.append(f"{where}: no __launch_bounds__, so its block size is unchecked")
        elif n["registers"] * block > REGISTERS_PER_BLOCK:
            problems.append(f"{where}: {n['registers']} registers x {block} threads > "
                            f"{REGISTERS_PER_BLOCK}")
        if n["shared"] > STATIC_SHARED_LIMIT:
            problems.append(f"{where}: {n['shared']} bytes of static shared memory > "
                            f"{STATIC_SHARED_LIMIT}")
        if n["spill_stores"] or n["spill_loads"]:
            spills.append(f"{where}: {n['spill_stores']} bytes spill stores, "
                          f"{n['spill_loads']} bytes spill loads, {n['registers']} registers")

    table = "\n".join(lines)
    if args.report:
        with open(args.report, "w") as report:
            report.write(table + "\n")
    kernels_checked = len(results)
    print(f"{kernels_checked} kernel builds checked ({len(architectures)} architectures, "
          f"{len(sources)} sources)")
    per_arch = {}
    for arch, _, _, n in results:
        total = per_arch.setdefault(arch, [0, 0])
        total[0] += 1
        total[1] += 1 if (n["spill_stores"] or n["spill_loads"]) else 0
    for arch in sorted(per_arch):
        print(f"sm_{arch}: {per_arch[arch][0]} kernels, {per_arch[arch][1]} with spills")
    for line in spills:
        print(f"spill: {line}")
    for line in problems:
        print(f"PROBLEM: {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
