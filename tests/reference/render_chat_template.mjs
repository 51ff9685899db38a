// Renders a chat template with @huggingface/jinja: a second opinion beside
// render_chat_template.py (Python's Jinja2, as transformers uses it).
//
// Same protocol: one request, or a JSON array of requests, on standard input,
//   {"template": "...", "context": {...variables...}, "now": "2026-11-25T12:00:00"}
// and one result, or an array of results, on standard output:
//   {"ok": true, "text": "..."} or {"ok": false, "error": "...", "error_type": "..."}
import { readFileSync } from "node:fs";
import { Environment, Template } from "@huggingface/jinja";

const DEFAULT_NOW = "2026-01-01T00:00:00";
const MONTHS = [
  "January", "February", "March", "April", "May", "June",
  "July", "August", "September", "October", "November", "December",
];
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

// The library's strftime_now reads the clock; tests need the request's fixed
// time, formatted as Python's strftime does in the C locale.
function strftime(fields, format) {
  const pad = (n, width = 2) => String(n).padStart(width, "0");
  return format.replace(/%[YmdbBaAHMSjyp%]/g, (token) => {
    switch (token) {
      case "%Y": return String(fields.year);
      case "%y": return pad(fields.year % 100);
      case "%m": return pad(fields.month);
      case "%d": return pad(fields.day);
      case "%b": return MONTHS[fields.month - 1].slice(0, 3);
      case "%B": return MONTHS[fields.month - 1];
      case "%a": return DAYS[fields.weekday].slice(0, 3);
      case "%A": return DAYS[fields.weekday];
      case "%H": return pad(fields.hour);
      case "%M": return pad(fields.minute);
      case "%S": return pad(fields.second);
      case "%p": return fields.hour < 12 ? "AM" : "PM";
      case "%j": return pad(fields.dayOfYear, 3);
      default: return "%";
    }
  });
}

// Template.render declares its globals, then the caller's variables, and
// refuses a second declaration of a name; let the caller's strftime_now
// replace the global one (and nothing else).
const declareVariable = Environment.prototype.declareVariable;
Environment.prototype.declareVariable = function (name, value) {
  if (name === "strftime_now" && this.variables.has(name)) {
    this.variables.set(name, value);
    return value;
  }
  return declareVariable.call(this, name, value);
};

function parseNow(text) {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(text);
  if (!match) throw new Error(`"now" is not an ISO date and time: ${text}`);
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? 0));
  const utc = Date.UTC(year, month - 1, day);
  return {
    year, month, day, hour, minute, second,
    weekday: new Date(utc).getUTCDay(),
    dayOfYear: Math.round((utc - Date.UTC(year, 0, 1)) / 86400000) + 1,
  };
}

function render(request) {
  try {
    if (request === null || typeof request !== "object" || typeof request.template !== "string") {
      throw new Error('a request is an object with a "template" string');
    }
    const context = request.context ?? {};
    if (context === null || typeof context !== "object" || Array.isArray(context)) {
      throw new Error('"context" must be an object');
    }
    const now = parseNow(request.now ?? DEFAULT_NOW);
    const template = new Template(request.template);
    const text = template.render({ strftime_now: (format) => strftime(now, format), ...context });
    return { ok: true, text };
  } catch (error) {
    return { ok: false, error: String(error?.message ?? error), error_type: error?.name ?? "Error" };
  }
}

let requests;
try {
  requests = JSON.parse(readFileSync(0, "utf8"));
} catch (error) {
  process.stderr.write(`render_chat_template.mjs: standard input is not JSON: ${error.message}\n`);
  process.exit(1);
}
const results = Array.isArray(requests) ? requests.map(render) : render(requests);
process.stdout.write(JSON.stringify(results) + "\n");
