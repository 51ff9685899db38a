#pragma once

// The model and conversation that the generation tests of quire-cli share:
// made once per suite by the program itself, as a user would.

#include <QString>

namespace cli_test {

// `quire-cli make-model DIR/exl2 --format exl2:4.0 --seed 5`: a small
// random-weight model in EXL2 at 4 bits. Its path, or an empty string (with
// the program's error as a warning) when it could not be made.
QString make_exl2_model(const QString& dir);

// A conversation script for replay at DIR/ten-turns.json: the system prompt
// "Be brief." and ten user messages of 54 tokens each in ChatML, as a person
// would type them. Its path, or an empty string when it cannot be written.
QString write_ten_turn_script(const QString& dir);

// Both of the above under `dir`, into *model and *script; false (with a
// warning) when either could not be made.
bool make_model_and_script(const QString& dir, QString* model, QString* script);

}  // namespace cli_test
