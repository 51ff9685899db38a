# Unity builds: scripts/test.sh and scripts/package-test.sh configure with
# CMAKE_UNITY_BUILD=ON, which compiles each target's sources in batches of
# eight, one translation unit per batch. The heavy headers (Qt Test,
# nlohmann/json, CLI11) and the code they instantiate are then compiled, and
# instrumented by the sanitizers, once per batch instead of once per file:
# a cold CI build takes about a third of the time. Everyday builds stay one
# file per unit, so a missing #include still shows there.
#
# quire_compile_alone(<source>...) keeps sources out of the batches: those
# whose file-local names (anonymous namespaces, Q_DECLARE_METATYPE) collide
# with another source of the same target, or that GCC would warn about
# when included from a batch (-Wsubobject-linkage).
function(quire_compile_alone)
  set_source_files_properties(${ARGN} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
