# Vision towers and projectors (Gemma 3's SigLIP, Mistral 3's Pixtral, Qwen2.5-VL's ViT).
# quire_engine_vision_weights reads and checks them (config and tensors,
# without Qt or kernels: the model's description links it);
# quire_engine_vision_tower runs them on the CPU.
add_library(quire_engine_vision_weights STATIC
  src/gemma3_image_scratch.cpp
  src/gemma3_vision_config.cpp
  src/pixtral_image_scratch.cpp
  src/pixtral_vision_config.cpp
  src/pixtral_vision_summary.cpp
  src/pixtral_vision_weights.cpp
  src/qwen25_image_scratch.cpp
  src/qwen25_vision_config.cpp
  src/qwen25_vision_weights.cpp
  src/vision_tower_summary.cpp
  src/vision_weights.cpp
  src/weight_reader.cpp
)
add_library(quire::engine_vision_weights ALIAS quire_engine_vision_weights)
target_include_directories(quire_engine_vision_weights PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
target_link_libraries(quire_engine_vision_weights
  PUBLIC quire::engine_common quire::engine_io quire::kernels_common
  PRIVATE quire_kernels_cpu_support quire::engine_vision nlohmann_json::nlohmann_json)
quire_target_warnings(quire_engine_vision_weights)

add_library(quire_engine_vision_tower STATIC
  src/gemma3_projector.cpp
  src/gemma3_vision_encoder.cpp
  src/mistral3_projector.cpp
  src/pixtral_ops.cpp
  src/pixtral_tower.cpp
  src/pixtral_vision_encoder.cpp
  src/qwen25_vision_encoder.cpp
  src/qwen25_vision_tower.cpp
  src/siglip_tower.cpp
  src/vision_ops.cpp
)
add_library(quire::engine_vision_tower ALIAS quire_engine_vision_tower)
target_link_libraries(quire_engine_vision_tower
  PUBLIC quire_engine_vision_weights quire_kernels_cpu_support
  PRIVATE quire_kernels_cpu_linear)
quire_target_warnings(quire_engine_vision_tower)
quire_target_hot_loops(quire_engine_vision_tower)

# The tower at a real shape with random weights (docs/vision.md, bench/notes/vision-tower.md).
add_executable(quire-vision-bench bench/tower_bench.cpp)
target_link_libraries(quire-vision-bench PRIVATE quire::engine_vision_tower)
quire_target_warnings(quire-vision-bench)
