#include "quire/ui/memory_style.h"

#include <algorithm>

namespace quire::ui {
namespace {

// Relative luminance, good enough to pick light or dark lines over a fill.
bool isDark(const QColor& colour) {
  return 0.299 * colour.redF() + 0.587 * colour.greenF() + 0.114 * colour.blueF() < 0.5;
}

}  // namespace

QColor blend(const QColor& a, const QColor& b, double amount) {
  const double t = std::clamp(amount, 0.0, 1.0);
  auto mix = [t](int x, int y) { return static_cast<int>(x + (y - x) * t + 0.5); };
  return QColor(mix(a.red(), b.red()), mix(a.green(), b.green()), mix(a.blue(), b.blue()),
                mix(a.alpha(), b.alpha()));
}

QColor trackColor(const QPalette& palette) {
  return blend(palette.color(QPalette::Window), palette.color(QPalette::WindowText), 0.15);
}

QColor outlineColor(const QPalette& palette) {
  return blend(palette.color(QPalette::Window), palette.color(QPalette::WindowText), 0.35);
}

QColor secondaryTextColor(const QPalette& palette) {
  return blend(palette.color(QPalette::WindowText), palette.color(QPalette::Window), 0.35);
}

QColor pageStateColor(PageCellState state, const QPalette& palette) {
  switch (state) {
    case PageCellState::Free:
      return trackColor(palette);
    case PageCellState::Active:
      return QColor::fromRgb(palette::kBlue);
    case PageCellState::Cached:
      return QColor::fromRgb(palette::kSkyBlue);
    case PageCellState::Shared:
      return QColor::fromRgb(palette::kOrange);
  }
  return trackColor(palette);
}

QString pageStateName(PageCellState state) {
  switch (state) {
    case PageCellState::Free:
      return QStringLiteral("free");
    case PageCellState::Active:
      return QStringLiteral("in use");
    case PageCellState::Cached:
      return QStringLiteral("cached");
    case PageCellState::Shared:
      return QStringLiteral("shared");
  }
  return QString();
}

QString pageStateLabel(PageCellState state) {
  QString name = pageStateName(state);
  if (!name.isEmpty()) name[0] = name[0].toUpper();
  return name;
}

QColor fromDiskColor() {
  return QColor::fromRgb(palette::kYellow);
}

QString fromDiskLabel() {
  return QStringLiteral("Restored from disk");
}

QColor segmentColor(MemorySegment segment, const QPalette& palette) {
  switch (segment) {
    case MemorySegment::Weights:
      return QColor::fromRgb(palette::kBluishGreen);
    case MemorySegment::Cache:
      return QColor::fromRgb(palette::kVermillion);
    case MemorySegment::HostTier:
      // The cache's colour, lighter: pages of the same cache, set aside.
      return blend(QColor::fromRgb(palette::kVermillion), Qt::white, 0.45);
    case MemorySegment::Program:
      return QColor::fromRgb(palette::kDarkGrey);
    case MemorySegment::Scratch:
      return QColor::fromRgb(palette::kPurple);
    case MemorySegment::Other:
      return QColor::fromRgb(palette::kGrey);
    case MemorySegment::Free:
      return trackColor(palette);
  }
  return trackColor(palette);
}

Qt::BrushStyle segmentPattern(MemorySegment segment) {
  switch (segment) {
    case MemorySegment::Weights:
      return Qt::NoBrush;
    case MemorySegment::Cache:
      return Qt::BDiagPattern;
    case MemorySegment::HostTier:
      return Qt::FDiagPattern;
    case MemorySegment::Program:
      return Qt::VerPattern;
    case MemorySegment::Scratch:
      return Qt::DiagCrossPattern;
    case MemorySegment::Other:
      return Qt::HorPattern;
    case MemorySegment::Free:
      return Qt::NoBrush;
  }
  return Qt::NoBrush;
}

QColor segmentPatternColor(MemorySegment segment, const QPalette& palette) {
  const QColor fill = segmentColor(segment, palette);
  return isDark(fill) ? QColor(255, 255, 255, 110) : QColor(0, 0, 0, 90);
}

QString segmentLabel(MemorySegment segment) {
  switch (segment) {
    case MemorySegment::Weights:
      return QStringLiteral("Weights");
    case MemorySegment::Cache:
      return QStringLiteral("KV cache");
    case MemorySegment::HostTier:
      return QStringLiteral("Host tier");
    case MemorySegment::Program:
      return QStringLiteral("Quire itself");
    case MemorySegment::Scratch:
      return QStringLiteral("Scratch");
    case MemorySegment::Other:
      return QStringLiteral("Other processes");
    case MemorySegment::Free:
      return QStringLiteral("Free");
  }
  return QString();
}

qint64 segmentBytes(const DeviceMemoryView& device, MemorySegment segment) {
  switch (segment) {
    case MemorySegment::Weights:
      return device.weights;
    case MemorySegment::Cache:
      return device.cache;
    case MemorySegment::HostTier:
      return device.host_tier;
    case MemorySegment::Program:
      return device.program;
    case MemorySegment::Scratch:
      return device.scratch;
    case MemorySegment::Other:
      return device.other;
    case MemorySegment::Free:
      return device.free;
  }
  return 0;
}

bool segmentListed(const DeviceMemoryView& device, MemorySegment segment) {
  const bool host_only = segment == MemorySegment::HostTier || segment == MemorySegment::Program;
  return device.host || !host_only;
}

}  // namespace quire::ui
