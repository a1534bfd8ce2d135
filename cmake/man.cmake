# Man pages made from the docs at build time with pandoc (scripts/man-page.sh):
#   pinpoint(1) from docs/cli.md, pinpointd(8) from docs/admin.md, pinpointd.json(5) from the
#   configuration reference in docs/admin.md. Built into build/man; PINPOINT_MAN_PAGES lists them.
find_program(PANDOC_EXECUTABLE pandoc)
set(PINPOINT_MAN_PAGES)
if(NOT PANDOC_EXECUTABLE)
  message(WARNING "pinpoint: no pandoc (scripts/install-deps.sh build installs it): no man pages")
  return()
endif()
set(PINPOINT_MAN_DIR ${CMAKE_BINARY_DIR}/man)
file(MAKE_DIRECTORY ${PINPOINT_MAN_DIR})
function(pinpoint_man_page file name section summary doc)
  set(out ${PINPOINT_MAN_DIR}/${file}.${section}.gz)
  add_custom_command(
    OUTPUT ${out}
    COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/man-page.sh ${out} ${name} ${section} ${summary}
            ${PINPOINT_DEB_VERSION} ${PROJECT_SOURCE_DIR}/${doc} ${ARGN}
    DEPENDS ${PROJECT_SOURCE_DIR}/${doc} ${PROJECT_SOURCE_DIR}/scripts/man-page.sh
            ${PROJECT_SOURCE_DIR}/docs/man/man.lua
    COMMENT "Man page ${name}(${section}) from ${doc}"
    VERBATIM)
  set(PINPOINT_MAN_PAGES ${PINPOINT_MAN_PAGES} ${out} PARENT_SCOPE)
endfunction()
pinpoint_man_page(pinpoint pinpoint 1 "submit and follow GPU jobs on a pinpoint node" docs/cli.md)
pinpoint_man_page(pinpointd pinpointd 8 "the pinpoint GPU node agent" docs/admin.md)
pinpoint_man_page(pinpointd.json pinpointd.json 5 "configuration of pinpointd" docs/admin.md Configuration)
add_custom_target(man ALL DEPENDS ${PINPOINT_MAN_PAGES})
