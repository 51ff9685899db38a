// The transcript on paper: the document of layoutTranscript() paginated by
// Qt's own text layout (which moves a line that would cross the page's foot
// to the next page, so no line is cut) and painted page by page into a
// QPdfWriter, with the page number in a footer of its own.

#include <QAbstractTextDocumentLayout>
#include <QGuiApplication>
#include <QLocale>
#include <QPageLayout>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QTextDocument>

#include "quire/ui/chat_transcript.h"

namespace quire::ui {
namespace {

// Device units per inch. The PDF is vector either way; at the screen's
// density the layout's pixel sizes (margins, borders) keep their size.
constexpr int kPdfResolution = 96;
constexpr qreal kMarginMm = 15;

}  // namespace

QPageSize::PageSizeId pageSizeForLocale(const QLocale& locale) {
  switch (locale.territory()) {
    case QLocale::UnitedStates:
    case QLocale::Canada:
    case QLocale::Mexico:
    case QLocale::Philippines:
    case QLocale::Chile:
    case QLocale::Colombia:
    case QLocale::Venezuela:
    case QLocale::CostaRica:
    case QLocale::Guatemala:
    case QLocale::PuertoRico:
    case QLocale::DominicanRepublic:
    case QLocale::Panama:
    case QLocale::ElSalvador:
    case QLocale::Nicaragua:
      return QPageSize::Letter;
    default:
      return QPageSize::A4;
  }
}

bool writeTranscriptPdf(const Transcript& transcript, const QString& path,
                        QPageSize::PageSizeId pageSize, QString* error) {
  const auto failed = [&](const QString& problem) {
    if (error != nullptr) *error = QStringLiteral("Cannot write %1: %2.").arg(path, problem);
    return false;
  };
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return failed(file.errorString());
  {
    QPdfWriter writer(&file);
    writer.setResolution(kPdfResolution);
    writer.setPageLayout(QPageLayout(QPageSize(pageSize), QPageLayout::Portrait,
                                     QMarginsF(kMarginMm, kMarginMm, kMarginMm, kMarginMm),
                                     QPageLayout::Millimeter));
    writer.setTitle(transcript.title);
    writer.setCreator(QStringLiteral("Quire"));

    const QPalette palette = transcriptPalette();
    QTextDocument document;
    layoutTranscript(&document, transcript, palette);
    const QRectF area = writer.pageLayout().paintRectPixels(kPdfResolution);
    const QFontMetricsF footerMetrics(document.defaultFont(), &writer);
    const qreal footer = footerMetrics.height() * 2;
    const qreal bodyHeight = area.height() - footer;
    document.setPageSize(QSizeF(area.width(), bodyHeight));
    const int pages = document.pageCount();

    QPainter painter;
    if (!painter.begin(&writer)) return failed(QStringLiteral("the PDF writer did not start"));
    for (int page = 0; page < pages; ++page) {
      if (page > 0) writer.newPage();
      const QRectF clip(0, page * bodyHeight, area.width(), bodyHeight);
      painter.save();
      painter.translate(0, -clip.top());
      painter.setClipRect(clip);
      QAbstractTextDocumentLayout::PaintContext context;
      context.clip = clip;
      context.palette = palette;
      document.documentLayout()->draw(&painter, context);
      painter.restore();
      painter.setPen(palette.color(QPalette::PlaceholderText));
      painter.setFont(document.defaultFont());
      painter.drawText(
          QRectF(0, bodyHeight, area.width(), footer), Qt::AlignCenter,
          QGuiApplication::translate("Transcript", "Page %1 of %2").arg(page + 1).arg(pages));
    }
    if (!painter.end()) return failed(QStringLiteral("the PDF writer failed"));
  }
  if (!file.commit()) return failed(file.errorString());
  return true;
}

}  // namespace quire::ui
