# pinpoint (installed as /etc/profile.d/pinpoint.sh): inside a pinpoint job, a login shell (a job
# script's `#!/bin/bash -l`) sets its PATH anew from /etc/profile, which drops pinpoint's srun and
# scontrol; pinpointd names their directory in PINPOINT_SRUN_DIR, put first on the PATH again here.
# Outside a pinpoint job the variable is unset and nothing changes.
if [ -n "${PINPOINT_SRUN_DIR:-}" ] && [ -d "${PINPOINT_SRUN_DIR}" ]; then
  case ":${PATH}:" in
    *":${PINPOINT_SRUN_DIR}:"*) ;;
    *) PATH="${PINPOINT_SRUN_DIR}:${PATH}"; export PATH ;;
  esac
fi
