// Internal to src/store: schema version 6's step (schema.cc). Stores written before it keep a job
// array's pending tasks as one record each; version 6 keeps an array's pending tasks as one record,
// its rest (daemon/jobs/array_rest.h). The step folds each array's unstarted tasks that differ only
// in their index into one rest under the first one's id, and deletes the others with their submit
// events (their ids stay reserved: the tasks are taken out under them again when they start). An
// array whose tasks are not all stored any more (some ended and were purged) is left as it is: its
// tasks' places cannot be known, and task records are still what the daemon runs.
#pragma once

#include "pinpoint/status.h"
#include "store/sqlite.h"

namespace pinpoint::store {

// Runs inside MigrateTo's transaction. Errors: kIo; kInternal for a record it cannot read.
Status FoldPendingArrayTasks(Db* db);

}  // namespace pinpoint::store
