#pragma once

// The suite of test_tool_requests.cpp, declared apart: moc cannot read that
// file's raw strings.

#include <QObject>

class ToolRequestTest : public QObject {
  Q_OBJECT

 private slots:
  void aToolLoopIsParsedInOrder();
  void toolChoiceVariants();
  void badToolRequests_data();
  void badToolRequests();
  void thePromptIsTheTemplatesRendering_data();
  void thePromptIsTheTemplatesRendering();
  void requiredAndNamedChoicesForceACall();
  void callsEndWhereTheModelWaitsForResults();
  void strictToolsHoldACallOnceBegun();
  void whatCannotBeDoneIsRefused();
};
