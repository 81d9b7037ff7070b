# Writes OUTPUT, a C++ file defining `const char* const VARIABLE` in
# NAMESPACE (declared in HEADER) as the text of SOURCE_DIR/INPUT. Run at
# build time (cmake -P) so that an edited file is picked up by the next
# build.
file(READ ${SOURCE_DIR}/${INPUT} text)
set(body "// Generated from ${INPUT}. Do not edit.\n")
string(APPEND body "#include \"${HEADER}\"\n\n")
string(APPEND body "namespace ${NAMESPACE} {\n\n")
string(APPEND body "const char* const ${VARIABLE} = R\"migserve_text(${text})migserve_text\";\n\n")
string(APPEND body "}  // namespace ${NAMESPACE}\n")
file(WRITE ${OUTPUT}.new "${body}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUTPUT}.new ${OUTPUT})
