#pragma once

// Colours, patterns and names shared by the memory panel's widgets, so that a
// legend swatch and the thing it explains are painted by the same rules.
//
// The data colours come from the Okabe–Ito palette, chosen to stay distinct
// under the common forms of colour blindness; each segment of a device bar also
// carries its own hatch, and shared pages a dot, so no meaning rests on hue
// alone. Free memory and free pages take a neutral track colour derived from
// the widget palette, so they read as "empty" on light and dark themes alike.

#include <QColor>
#include <QPalette>
#include <QString>
#include <Qt>
#include <array>

#include "quire/ui/memory_view_data.h"

namespace quire::ui {

// The parts of a device bar, in drawing order (left to right).
// HostTier and Program are parts of host memory only (DeviceMemoryView::host).
enum class MemorySegment : quint8 { Weights, Cache, HostTier, Scratch, Program, Other, Free };

inline constexpr int kMemorySegmentCount = 7;
inline constexpr std::array<MemorySegment, kMemorySegmentCount> kMemorySegments{
    MemorySegment::Weights, MemorySegment::Cache, MemorySegment::HostTier, MemorySegment::Scratch,
    MemorySegment::Program, MemorySegment::Other, MemorySegment::Free};
// Whether `device`'s legend and tooltip list `segment`: every part, zero or
// not, except the parts only host memory has.
bool segmentListed(const DeviceMemoryView& device, MemorySegment segment);
inline constexpr std::array<PageCellState, kPageCellStateCount> kPageCellStates{
    PageCellState::Free, PageCellState::Active, PageCellState::Cached, PageCellState::Shared};

// Okabe–Ito colours used by the panel.
namespace palette {
inline constexpr QRgb kBlue = 0xff0072b2;         // pages in use
inline constexpr QRgb kSkyBlue = 0xff56b4e9;      // cached pages
inline constexpr QRgb kOrange = 0xffe69f00;       // shared pages
inline constexpr QRgb kYellow = 0xfff0e442;       // pages restored from disk
inline constexpr QRgb kBluishGreen = 0xff009e73;  // model weights
inline constexpr QRgb kVermillion = 0xffd55e00;   // KV cache bytes
inline constexpr QRgb kPurple = 0xffcc79a7;       // scratch buffers
inline constexpr QRgb kGrey = 0xff8c8c8c;         // other processes
inline constexpr QRgb kDarkGrey = 0xff4d4d4d;     // Quire's own memory
}  // namespace palette

// `a` moved towards `b` by `amount` (0..1), per channel.
QColor blend(const QColor& a, const QColor& b, double amount);

// Background of free memory and free pages: the window colour tinted towards
// the text colour, visible against the window on light and dark themes.
QColor trackColor(const QPalette& palette);
// Thin outlines around bars and swatches.
QColor outlineColor(const QPalette& palette);
// Secondary text (captions, units): the text colour faded towards the window.
QColor secondaryTextColor(const QPalette& palette);

QColor pageStateColor(PageCellState state, const QPalette& palette);
// Lower-case noun phrase for tooltips and accessibility: "in use", "cached".
QString pageStateName(PageCellState state);
// Capitalised legend label: "In use".
QString pageStateLabel(PageCellState state);

// Pages whose content was read back from the disk tier (PageCellView::from_disk)
// are drawn in a colour of their own, whatever their state, so that a chat
// resumed after a restart shows where it came from.
QColor fromDiskColor();
// Their legend label: "Restored from disk".
QString fromDiskLabel();

QColor segmentColor(MemorySegment segment, const QPalette& palette);
// Hatch drawn over the segment's colour; Qt::NoBrush for none.
Qt::BrushStyle segmentPattern(MemorySegment segment);
// Colour of the hatch lines: light over dark fills and dark over light ones,
// whatever the theme.
QColor segmentPatternColor(MemorySegment segment, const QPalette& palette);
QString segmentLabel(MemorySegment segment);  // "KV cache"
// The bytes of `device` that `segment` stands for.
qint64 segmentBytes(const DeviceMemoryView& device, MemorySegment segment);

}  // namespace quire::ui
