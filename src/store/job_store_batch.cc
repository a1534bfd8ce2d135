// JobStore's write batches (job_store.h, JobStore::Batch): many writes, one durable commit.
#include <memory>
#include <utility>

#include "store/job_store.h"
#include "store/job_store_impl.h"

namespace pinpoint::store {

JobStore::Batch::Batch(Impl* impl, std::unique_ptr<Transaction> txn)
    : impl_(impl), txn_(std::move(txn)) {}

JobStore::Batch::Batch(Batch&& other) noexcept
    : impl_(std::exchange(other.impl_, nullptr)), txn_(std::move(other.txn_)) {}

JobStore::Batch::~Batch() {
  txn_.reset();  // rolls back unless committed
  if (impl_ != nullptr) impl_->batch_open = false;
}

Status JobStore::Batch::Commit() {
  Status s = impl_->db.InTransaction()
                 ? txn_->Commit()
                 : IoError("sqlite: " + impl_->db.path() +
                           ": the write batch was undone by an earlier error");
  txn_.reset();
  impl_->batch_open = false;
  impl_ = nullptr;
  return s;
}

Result<JobStore::Batch> JobStore::BeginBatch() {
  if (impl_->batch_open) return FailedPrecondition("a write batch is open already");
  PP_RETURN_IF_ERROR(CheckFile());
  Result<Transaction> txn = Transaction::Begin(&impl_->db);
  if (!txn.ok()) return txn.status();
  impl_->batch_open = true;
  return Batch(impl_.get(), std::make_unique<Transaction>(std::move(txn).value()));
}

}  // namespace pinpoint::store
