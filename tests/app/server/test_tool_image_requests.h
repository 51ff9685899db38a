#pragma once

// The suite of test_tool_image_requests.cpp, declared apart: moc cannot read
// that file's raw strings.

#include <QObject>

class ToolImageRequestTest : public QObject {
  Q_OBJECT

 private slots:
  void imagesAndToolsShareOnePrompt();
  void aTemplateThatDropsImagesIsRefused();
};
