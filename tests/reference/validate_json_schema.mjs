// Validates texts against JSON schemas with ajv (draft 2020-12) and
// ajv-formats: what Quire's grammar tests check generated output with.
//   node validate_json_schema.mjs CASES.json
// CASES.json: [{"schema": {...}, "texts": ["...", ...]}, ...]. Prints
// [{"case": i, "text": j, "valid": bool, "errors": "..."}, ...] for every text.
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
// strictTuples only lints open-ended tuples, which the random schemas write on purpose.
const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true, strictTuples: false });
addFormats(ajv);
const results = [];
cases.forEach(({ schema, texts }, caseIndex) => {
  const validate = ajv.compile(schema);
  texts.forEach((text, textIndex) => {
    let valid = false;
    let errors = "";
    try {
      valid = validate(JSON.parse(text));
      if (!valid) errors = ajv.errorsText(validate.errors);
    } catch (error) {
      errors = `not JSON: ${error.message}`;
    }
    results.push({ case: caseIndex, text: textIndex, valid, errors });
  });
});
process.stdout.write(JSON.stringify(results));
