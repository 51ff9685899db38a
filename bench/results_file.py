"""What a benchmark's results file holds besides its measurements, and how it
is written: the date, the commit and the machine open the JSON file, the
Markdown table beside it says the same in its heading, and both go where
--json and --table name (bench/results/<date>-<name>.json and .md, as the
shell scripts choose with bench/results_base.sh). A script that runs its
benchmark itself calls add_arguments() and stamp() instead of
summarize_runs().

  args, results = results_file.summarize_runs("label", "LABEL")
  lines = [results_file.title("What was measured", results), "",
           results_file.machine_line(results) + " More about the runs.", ...]
  results_file.write(args, results, lines)"""

import argparse
import datetime
import json
import platform


def add_arguments(parser, commit_required=True, load=False):
    """--commit, --json and --table; --load, the load average the shell
    script read before the runs, where `load`."""
    parser.add_argument("--commit", required=commit_required, default="",
                        help="the commit measured (git rev-parse --short HEAD)")
    if load:
        parser.add_argument("--load", default="", help="the load average before the runs")
    parser.add_argument("--json", required=True, help="results file to write")
    parser.add_argument("--table", required=True, help="Markdown table to write")


def labelled_runs(arguments, key):
    """LABEL=FILE arguments, each file a `quire-cli bench --json` output, as
    [{key: LABEL, "result": the file's JSON}] in the order given."""
    runs = []
    for argument in arguments:
        label, path = argument.split("=", 1)
        with open(path) as file:
            runs.append({key: label, "result": json.load(file)})
    return runs


def summarize_runs(key, metavar):
    """The command line of a script that collects `quire-cli bench --json`
    runs (--commit, --load, --json, --table and METAVAR=FILE arguments):
    the arguments, and the results stamped now with the runs under "runs",
    each labelled under `key`."""
    parser = argparse.ArgumentParser()
    add_arguments(parser, load=True)
    parser.add_argument("runs", nargs="+", help=f"{metavar}=FILE")
    args = parser.parse_args()
    return args, stamp(args.commit, args.load) | {"runs": labelled_runs(args.runs, key)}


def cpu_name():
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average():
    """The load average now, for a script that runs its benchmark itself."""
    with open("/proc/loadavg") as file:
        return " ".join(file.read().split()[:3])


def stamp(commit, load=None):
    """The fields every results file opens with, dated now: the load average
    only where the script knows it."""
    fields = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "commit": commit, "machine": cpu_name()}
    if load is not None:
        fields["load_average"] = load
    return fields


def title(heading, results):
    return f"# {heading} ({results['date']}, commit {results['commit']})"


def machine_line(results):
    return f"{results['machine']}, load average {results['load_average']}."


def write(args, results, lines):
    """The results as indented JSON to --json, the lines to --table; each file
    ends with a newline."""
    with open(args.json, "w", encoding="utf-8") as file:
        json.dump(results, file, indent=2)
        file.write("\n")
    with open(args.table, "w", encoding="utf-8") as file:
        file.write("\n".join(lines) + "\n")
