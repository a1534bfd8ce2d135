#include "cli/cdi.h"

#include <unistd.h>

#include <ostream>

#include "cdi/spec.h"
#include "common/companion.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/client.h"
#include "pinpoint/time_limit.h"
#include "pinpoint/units.h"

namespace pinpoint::cli {

using nlohmann::json;

Result<int> RunCdi(const std::string& socket, bool json_output, const CdiArgs& args,
                   std::ostream& out) {
  OpenLeaseRequest op;
  op.request.gpus = args.gpus;
  op.request.name = args.name;
  op.request.as_user = args.user;
  if (!args.gpu_mem.empty()) {
    auto mem = ParseSize(args.gpu_mem);
    if (!mem.ok()) return mem.status();
    op.request.gpu_mem_bytes = *mem;
  }
  if (!args.gpu_share.empty()) {
    auto share = ParsePercent(args.gpu_share);
    if (!share.ok()) return share.status();
    op.request.gpu_share_pct = *share;
  }
  if (!args.time.empty()) {
    auto seconds = ParseTimeLimit(args.time);
    if (!seconds.ok()) return InvalidArgument("--time: " + seconds.status().message());
    if (*seconds == 0)
      return InvalidArgument("--time must be more than 0; leave it out for the node's default");
    op.request.time_limit_s = *seconds;
  }
  if (args.cdi_dir.empty() || args.cdi_dir[0] != '/')
    return InvalidArgument("--cdi-dir must be an absolute path");
  auto client = Client::Connect(socket);
  if (!client.ok()) return client.status();
  auto opened = client->OpenLease(op);
  if (!opened.ok()) return opened.status();
  JobId id = opened->lease.id;
  auto hook = cdi::CheckHookPath(CompanionPath("pinpoint-cdi-hook"), ::geteuid());
  cdi::SpecDir specs(args.cdi_dir);
  Status written = hook.status();
  if (written.ok())
    written = specs.Write(id, cdi::Spec(id, opened->edits, *hook, socket, args.cdi_dir));
  if (!written.ok()) {
    (void)client->CloseLease(CloseLeaseRequest{id});  // no spec: nothing could attach
    return written;
  }
  if (json_output) {
    out << json{{"device", cdi::QualifiedName(id)},
                {"lease", ToJson(opened->lease)},
                {"spec", specs.PathOf(id)}}
               .dump(2)
        << "\n";
  } else {
    out << cdi::QualifiedName(id) << "\n";
  }
  return 0;
}

}  // namespace pinpoint::cli
