// The pinpointd socket API as typed messages, by topic: the job ops and the view of a job
// (api_jobs.h), the node's ops (api_node.h: gpus, logs) and leases (api_leases.h). Clients and
// pinpointd include this one header. Their JSON forms are in api_codec.h.
#pragma once

#include "pinpoint/api_jobs.h"
#include "pinpoint/api_leases.h"
#include "pinpoint/api_node.h"
