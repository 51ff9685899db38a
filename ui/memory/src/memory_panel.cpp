#include "quire/ui/memory_panel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QStackedLayout>
#include <QVBoxLayout>

#include "quire/ui/device_memory_bar.h"
#include "quire/ui/memory_history_chart.h"
#include "quire/ui/memory_text.h"
#include "quire/ui/page_map_legend.h"
#include "quire/ui/page_map_widget.h"

namespace quire::ui {
namespace {

// One spacing scale for the whole panel: margins, gaps between sections, gaps
// inside a section.
constexpr int kMargin = 16;
constexpr int kSectionGap = 18;
constexpr int kItemGap = 8;

QLabel* sectionTitle(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  QFont font = label->font();
  font.setBold(true);
  font.setPointSizeF(font.pointSizeF() * 1.1);
  label->setFont(font);
  label->setAccessibleName(text);
  return label;
}

// Captions and secondary numbers take the palette's muted text colour, so they
// follow light and dark themes.
QLabel* secondaryLabel(QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setForegroundRole(QPalette::PlaceholderText);
  return label;
}

// The caption over one of a mixed model's two maps: which layers it holds.
QLabel* captionLabel(QWidget* parent) {
  auto* label = new QLabel(parent);
  QFont font = label->font();
  font.setBold(true);
  label->setFont(font);
  label->setWordWrap(true);
  return label;
}

void setTextIfChanged(QLabel* label, const QString& text) {
  if (label->text() != text) label->setText(text);
}

}  // namespace

MemoryPanel::MemoryPanel(QWidget* parent) : QWidget(parent) {
  registerMemoryViewMetaTypes();
  setAccessibleName(tr("Memory"));
  setMinimumSize(320, 280);
  stack_ = new QStackedLayout(this);
  empty_state_ = buildEmptyState();
  content_ = buildContent();
  stack_->addWidget(empty_state_);
  stack_->addWidget(content_);
  stack_->setCurrentWidget(empty_state_);
}

QWidget* MemoryPanel::buildEmptyState() {
  auto* page = new QWidget(this);
  page->setObjectName(QStringLiteral("memoryEmptyState"));
  auto* layout = new QVBoxLayout(page);
  layout->setContentsMargins(kMargin * 2, kMargin, kMargin * 2, kMargin);
  layout->setSpacing(kItemGap);
  auto* title = sectionTitle(QString(), page);
  title->setAlignment(Qt::AlignHCenter);
  title->setObjectName(QStringLiteral("memoryEmptyTitle"));
  auto* text = secondaryLabel(page);
  empty_title_ = title;
  empty_text_ = text;
  setRemoteEndpoint(QString());
  text->setWordWrap(true);
  text->setAlignment(Qt::AlignHCenter);
  text->setObjectName(QStringLiteral("memoryEmptyText"));
  layout->addStretch(1);
  layout->addWidget(title);
  layout->addWidget(text);
  layout->addStretch(2);
  return page;
}

QWidget* MemoryPanel::buildContent() {
  auto* page = new QWidget(this);
  page->setObjectName(QStringLiteral("memoryContent"));
  auto* layout = new QVBoxLayout(page);
  layout->setContentsMargins(kMargin, kMargin, kMargin, kMargin);
  layout->setSpacing(kItemGap);

  layout->addWidget(sectionTitle(tr("Device memory"), page));
  devices_layout_ = new QVBoxLayout;
  devices_layout_->setSpacing(kItemGap + 4);
  layout->addLayout(devices_layout_);
  // A vision tower is its own item: it is in host memory (or not loaded),
  // whichever devices hold the model.
  vision_tower_ = secondaryLabel(page);
  vision_tower_->setObjectName(QStringLiteral("visionTower"));
  vision_tower_->setWordWrap(true);
  vision_tower_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  vision_tower_->hide();
  layout->addWidget(vision_tower_);
  layout->addSpacing(kSectionGap - kItemGap);

  auto* cache_header = new QHBoxLayout;
  cache_header->addWidget(sectionTitle(tr("KV cache"), page));
  cache_header->addStretch(1);
  shape_label_ = secondaryLabel(page);
  shape_label_->setObjectName(QStringLiteral("cacheShape"));
  cache_header->addWidget(shape_label_);
  layout->addLayout(cache_header);

  // The hit rate is the headline; the rest of the record sits beside it.
  auto* stats = new QHBoxLayout;
  stats->setSpacing(kMargin);
  hit_rate_label_ = new QLabel(page);
  hit_rate_label_->setObjectName(QStringLiteral("hitRate"));
  QFont big = hit_rate_label_->font();
  big.setBold(true);
  big.setPointSizeF(big.pointSizeF() * 1.8);
  hit_rate_label_->setFont(big);
  hit_rate_label_->setAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  stats->addWidget(hit_rate_label_, 0, Qt::AlignTop);
  auto* details = new QVBoxLayout;
  details->setSpacing(2);
  auto* caption = new QLabel(tr("prefix cache hit rate"), page);
  QFont caption_font = caption->font();
  caption_font.setBold(true);
  caption->setFont(caption_font);
  details->addWidget(caption);
  summary_label_ = secondaryLabel(page);
  summary_label_->setObjectName(QStringLiteral("cacheSummary"));
  summary_label_->setWordWrap(true);
  summary_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  details->addWidget(summary_label_);
  stats->addLayout(details, 1);
  layout->addLayout(stats);
  layout->addSpacing(kItemGap / 2);

  global_caption_ = captionLabel(page);
  global_caption_->setObjectName(QStringLiteral("globalLayersCaption"));
  global_caption_->hide();
  layout->addWidget(global_caption_);
  legend_ = new PageMapLegend(page);
  legend_->setObjectName(QStringLiteral("pageMapLegend"));
  layout->addWidget(legend_);
  page_map_ = new PageMapWidget(page);
  page_map_->setObjectName(QStringLiteral("pageMap"));
  layout->addWidget(page_map_, 1);
  window_section_ = buildWindowPoolSection(page);
  layout->addWidget(window_section_, 1);
  layout->addSpacing(kSectionGap - kItemGap);

  layout->addWidget(sectionTitle(tr("Last minutes"), page));
  chart_ = new MemoryHistoryChart(page);
  chart_->setMinimumHeight(220);
  layout->addWidget(chart_);
  return page;
}

QWidget* MemoryPanel::buildWindowPoolSection(QWidget* parent) {
  auto* section = new QWidget(parent);
  section->setObjectName(QStringLiteral("windowPoolSection"));
  auto* layout = new QVBoxLayout(section);
  layout->setContentsMargins(0, kItemGap, 0, 0);
  layout->setSpacing(kItemGap);
  auto* header = new QHBoxLayout;
  window_caption_ = captionLabel(section);
  window_caption_->setObjectName(QStringLiteral("slidingLayersCaption"));
  header->addWidget(window_caption_, 1);
  window_shape_ = secondaryLabel(section);
  window_shape_->setObjectName(QStringLiteral("windowPoolShape"));
  header->addWidget(window_shape_);
  layout->addLayout(header);
  window_legend_ = new PageMapLegend(section);
  window_legend_->setObjectName(QStringLiteral("windowPageMapLegend"));
  layout->addWidget(window_legend_);
  window_map_ = new PageMapWidget(section);
  window_map_->setObjectName(QStringLiteral("windowPageMap"));
  layout->addWidget(window_map_, 1);
  section->hide();
  return section;
}

bool MemoryPanel::isShowingWindowPool() const {
  return !window_section_->isHidden();
}

QString MemoryPanel::globalLayersCaptionText() const {
  return isShowingWindowPool() ? global_caption_->text() : QString();
}

QString MemoryPanel::slidingLayersCaptionText() const {
  return isShowingWindowPool() ? window_caption_->text() : QString();
}

QString MemoryPanel::windowShapeText() const {
  return isShowingWindowPool() ? window_shape_->text() : QString();
}

bool MemoryPanel::isShowingEmptyState() const {
  return stack_->currentWidget() == empty_state_;
}

QString MemoryPanel::hitRateText() const {
  return hit_rate_label_->text();
}

QString MemoryPanel::summaryText() const {
  return summary_label_->text();
}

QString MemoryPanel::cacheShapeText() const {
  return shape_label_->text();
}

QString MemoryPanel::visionTowerText() const {
  return vision_tower_->isHidden() ? QString() : vision_tower_->text();
}

QSize MemoryPanel::sizeHint() const {
  return QSize(720, 560);
}

void MemoryPanel::setSnapshot(const MemorySnapshotView& snapshot) {
  const bool was_empty = isShowingEmptyState();
  if (snapshot == snapshot_ && was_empty == snapshot.isEmpty()) return;
  snapshot_ = snapshot;
  if (snapshot_.isEmpty()) {
    stack_->setCurrentWidget(empty_state_);
    return;
  }

  syncDeviceBars();
  // The summary's counts come from the cache itself; the page list is a
  // fallback for a snapshot that carries only pages.
  PageStateCounts counts = PageStateCounts::fromSummary(snapshot_.cache);
  if (counts.total() == 0) counts = PageStateCounts::fromPages(snapshot_.pages);
  legend_->setCounts(counts);
  page_map_->setPages(snapshot_.pages);

  CacheSummaryView shape = snapshot_.cache;
  if (shape.total_pages == 0) shape.total_pages = static_cast<int>(snapshot_.pages.size());
  setTextIfChanged(shape_label_, quire::ui::cacheShapeText(shape));
  setTextIfChanged(hit_rate_label_, quire::ui::hitRateText(snapshot_.cache));
  setTextIfChanged(summary_label_, cacheSummaryText(snapshot_.cache));
  syncWindowPool();
  syncVisionTower();
  if (was_empty) stack_->setCurrentWidget(content_);
}

void MemoryPanel::recordSample(qint64 time_ms) {
  if (snapshot_.isEmpty()) return;
  history_.add(snapshot_, time_ms);
  chart_->setHistory(history_);
}

void MemoryPanel::setRemoteEndpoint(const QString& endpoint) {
  if (endpoint.isEmpty()) {
    empty_title_->setText(tr("No model loaded"));
    empty_text_->setText(
        tr("Load a model to see how its weights and KV cache fill each device's memory, "
           "and how cache pages are kept and shared between chats."));
    return;
  }
  empty_title_->setText(tr("The model runs on %1").arg(endpoint));
  empty_text_->setText(
      tr("Its weights and KV cache are in the memory of that machine, not this "
         "one. The replies' statistics show the engine's cached tokens when it "
         "reports them."));
}

void MemoryPanel::clear() {
  setSnapshot(MemorySnapshotView{});
  history_.clear();
  chart_->setHistory(history_);
}

void MemoryPanel::syncWindowPool() {
  const WindowPoolView& pool = snapshot_.window_pool;
  const bool shown = !pool.isEmpty();
  global_caption_->setVisible(shown);
  window_section_->setVisible(shown);
  if (!shown) {
    window_map_->setPages({});
    return;
  }
  setTextIfChanged(global_caption_, quire::ui::globalLayersCaptionText(pool));
  setTextIfChanged(window_caption_, quire::ui::slidingLayersCaptionText(pool));
  CacheSummaryView shape = pool.cache;
  if (shape.total_pages == 0) shape.total_pages = static_cast<int>(pool.pages.size());
  setTextIfChanged(window_shape_, quire::ui::cacheShapeText(shape));
  PageStateCounts counts = PageStateCounts::fromSummary(pool.cache);
  if (counts.total() == 0) counts = PageStateCounts::fromPages(pool.pages);
  window_legend_->setCounts(counts);
  window_map_->setPages(pool.pages);
}

void MemoryPanel::syncVisionTower() {
  const VisionTowerView& tower = snapshot_.vision_tower;
  vision_tower_->setVisible(!tower.isEmpty());
  if (tower.isEmpty()) return;
  setTextIfChanged(vision_tower_, quire::ui::visionTowerText(tower));
  vision_tower_->setToolTip(visionTowerToolTip(tower));
}

void MemoryPanel::syncDeviceBars() {
  // Bars are kept across snapshots so only the numbers that moved repaint.
  while (bars_.size() > snapshot_.devices.size()) {
    DeviceMemoryBar* bar = bars_.takeLast();
    devices_layout_->removeWidget(bar);
    delete bar;
  }
  while (bars_.size() < snapshot_.devices.size()) {
    auto* bar = new DeviceMemoryBar(content_);
    bar->setObjectName(QStringLiteral("deviceBar%1").arg(bars_.size()));
    devices_layout_->addWidget(bar);
    bars_.push_back(bar);
  }
  for (qsizetype i = 0; i < bars_.size(); ++i)
    bars_[i]->setDevice(snapshot_.devices[i]);
}

}  // namespace quire::ui
