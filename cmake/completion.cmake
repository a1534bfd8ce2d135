# Shell completion for pinpoint, generated at build time from its own command line
# (`pinpoint completion bash|zsh`, src/cli/completion.h): build/completion/{pinpoint,_pinpoint},
# installed by cmake/packaging.cmake.
set(PINPOINT_COMPLETION_DIR ${CMAKE_BINARY_DIR}/completion)
add_custom_command(
  OUTPUT ${PINPOINT_COMPLETION_DIR}/pinpoint ${PINPOINT_COMPLETION_DIR}/_pinpoint
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PINPOINT_COMPLETION_DIR}
  COMMAND sh -c "\"$1\" completion bash > \"$2\"/pinpoint && \"$1\" completion zsh > \"$2\"/_pinpoint"
          sh $<TARGET_FILE:pinpoint> ${PINPOINT_COMPLETION_DIR}
  DEPENDS pinpoint
  COMMENT "Shell completion from pinpoint's command line"
  VERBATIM)
add_custom_target(completion ALL DEPENDS ${PINPOINT_COMPLETION_DIR}/pinpoint ${PINPOINT_COMPLETION_DIR}/_pinpoint)

if(PINPOINT_TESTS)
  # Every subcommand and option of pinpoint and its companions is completed (tests/completion).
  add_test(NAME completion COMMAND bash ${PROJECT_SOURCE_DIR}/tests/completion/completion_test.sh
           $<TARGET_FILE_DIR:pinpoint> ${PROJECT_SOURCE_DIR})
  set_tests_properties(completion PROPERTIES TIMEOUT 120)
endif()
