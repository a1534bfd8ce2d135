# Run at install time (cmake --install, make install, CPack): the files whose place depends on the
# prefix installed to. For the prefix /usr (the Debian package): /etc/pinpoint/pinpointd.json and
# /lib/systemd/system/pinpointd.service, as Debian 12 places them. For any other prefix P
# (make install, default /usr/local): P/etc/pinpoint and P/lib/systemd/system, which systemd also
# reads. The unit's ExecStart names the pinpointd and the configuration of that prefix.
# An existing configuration file is never overwritten: the new defaults go beside it.
# Needs PINPOINT_SOURCE_DIR (set by cmake/packaging.cmake).
set(prefix "${CMAKE_INSTALL_PREFIX}")
if(prefix STREQUAL "/usr")
  set(PINPOINT_SYSCONFDIR "/etc")
  set(unit_dir "/lib/systemd/system")
  set(zsh_dir "/usr/share/zsh/vendor-completions")
else()
  set(PINPOINT_SYSCONFDIR "${prefix}/etc")
  set(unit_dir "${prefix}/lib/systemd/system")
  set(zsh_dir "${prefix}/share/zsh/site-functions")
endif()
set(PINPOINT_BINDIR "${prefix}/bin")
# file(INSTALL) puts $DESTDIR in front of each destination itself; what is written or checked
# by hand spells it out.

# Written in place (no scratch file: this script runs in whatever directory `cmake --install` does).
file(READ "${PINPOINT_SOURCE_DIR}/packaging/pinpointd.service.in" unit_text)
string(CONFIGURE "${unit_text}" unit_text @ONLY)
set(unit "$ENV{DESTDIR}${unit_dir}/pinpointd.service")
message(STATUS "Installing: ${unit}")
file(MAKE_DIRECTORY "$ENV{DESTDIR}${unit_dir}")
file(WRITE "${unit}" "${unit_text}")
file(CHMOD "${unit}" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${unit}")

set(config "$ENV{DESTDIR}${PINPOINT_SYSCONFDIR}/pinpoint/pinpointd.json")
if(EXISTS "${config}")
  message(STATUS "Kept: ${config} (the defaults are in ${config}.default)")
  file(INSTALL "${PINPOINT_SOURCE_DIR}/packaging/pinpointd.json" DESTINATION "${PINPOINT_SYSCONFDIR}/pinpoint"
       RENAME pinpointd.json.default PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
else()
  file(INSTALL "${PINPOINT_SOURCE_DIR}/packaging/pinpointd.json" DESTINATION "${PINPOINT_SYSCONFDIR}/pinpoint"
       PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
endif()

file(INSTALL "${PINPOINT_COMPLETION_DIR}/_pinpoint" DESTINATION "${zsh_dir}"
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

# A login shell inside a job finds pinpoint's srun again (packaging/pinpoint-profile.sh): /etc/profile
# reads /etc/profile.d for the prefix /usr; another prefix's copy is for the admin to link there.
file(INSTALL "${PINPOINT_SOURCE_DIR}/packaging/pinpoint-profile.sh"
     DESTINATION "${PINPOINT_SYSCONFDIR}/profile.d" RENAME pinpoint.sh
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
