#pragma once

// The suite of test_image_parts.cpp, declared apart: moc cannot read that
// file's raw strings.

#include <QObject>

class TestImageParts : public QObject {
  Q_OBJECT

 private slots:
  void partsKeepTheirOrder();
  void signatureWinsOverTheMediaType();
  void imageAloneHasNoText();
  void textPartsAloneKeepNoParts();
  void refusals_data();
  void refusals();
  void tooLargeAnImage();
  void modelWithoutVision();
  void generatorSwitchDecides();
};
