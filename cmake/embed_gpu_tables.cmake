# Writes OUTPUT, a C++ file defining kEmbeddedGpuTables from the YAML files
# in SOURCE_DIR/data/gpus. Run at build time (cmake -P) so that an edited
# table is picked up by the next build.
file(GLOB tables RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/data/gpus/*.yaml)
list(SORT tables)
set(body "// Generated from data/gpus/*.yaml. Do not edit.\n")
string(APPEND body "#include \"mig/embedded_gpu_tables.h\"\n\n")
string(APPEND body "namespace migserve::mig {\n\n")
string(APPEND body "const std::vector<EmbeddedGpuTable> kEmbeddedGpuTables = {\n")
foreach(table ${tables})
  file(READ ${SOURCE_DIR}/${table} text)
  string(APPEND body "    {\"${table}\", R\"migserve_yaml(${text})migserve_yaml\"},\n")
endforeach()
string(APPEND body "};\n\n}  // namespace migserve::mig\n")
file(WRITE ${OUTPUT}.new "${body}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUTPUT}.new ${OUTPUT})
