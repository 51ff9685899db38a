#pragma once

#include "math_box.h"
#include "mathml_tree.h"
#include "quire/ui/math_renderer.h"

namespace quire::ui {

class MathFonts;

// Lays out a <math> element (as KaTeX emits it) with an em of `emPixels`:
// display style when the element says display="block". An element the layout
// does not know is an error naming it.
MathResult<MathBox> layoutMath(const MathNode& math, qreal emPixels, MathFonts& fonts);

}  // namespace quire::ui
