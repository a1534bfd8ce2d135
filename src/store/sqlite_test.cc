#include "store/sqlite.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/store_test_util.h"

namespace pinpoint::store {
namespace {

using ::testing::HasSubstr;

class SqliteTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    testing::StoreTest::SetUp();
    Result<Db> db = Db::Open(db_path());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_.emplace(std::move(db).value());
    ASSERT_TRUE(db_->Exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)").ok());
  }
  void TearDown() override {
    db_.reset();
    testing::StoreTest::TearDown();
  }
  int64_t Rows() { return testing::Must(db_->QueryInt64("SELECT count(*) FROM t")); }

  std::optional<Db> db_;
};

TEST_F(SqliteTest, ErrorsAreIoWithSqlitesMessage) {
  Result<Statement> bad = db_->Prepare("SELECT nope FROM t");
  EXPECT_EQ(bad.status().code(), Code::kIo);
  EXPECT_THAT(bad.status().message(), HasSubstr("no such column: nope"));

  Status exec = db_->Exec("INSERT INTO t (k, v) VALUES (1, NULL)");
  EXPECT_EQ(exec.code(), Code::kIo);
  EXPECT_THAT(exec.message(), HasSubstr("NOT NULL"));
}

// Statements are reused (a write repeated for many jobs compiles its SQL once): a reused one starts
// unbound and reset, and two alive at once of the same text are two statements.
TEST_F(SqliteTest, AReusedStatementStartsAfreshAndTwoAliveAreIndependent) {
  {
    Result<Statement> insert = db_->Prepare("INSERT INTO t (k, v) VALUES (?1, ?2)");
    ASSERT_TRUE(insert.ok());
    insert->Bind(1, int64_t{1}).Bind(2, "a");
    ASSERT_TRUE(insert->Run().ok());
  }
  {
    Result<Statement> again = db_->Prepare("INSERT INTO t (k, v) VALUES (?1, ?2)");
    ASSERT_TRUE(again.ok());
    again->Bind(1, int64_t{2});  // ?2 left unbound: NULL, refused, not the "a" of before
    EXPECT_EQ(again->Run().code(), Code::kIo);
  }
  EXPECT_EQ(Rows(), 1);
  Result<Statement> first = db_->Prepare("SELECT k FROM t WHERE k >= ?1");
  Result<Statement> second = db_->Prepare("SELECT k FROM t WHERE k >= ?1");
  ASSERT_TRUE(first.ok() && second.ok());
  first->Bind(1, int64_t{1});
  second->Bind(1, int64_t{5});
  EXPECT_TRUE(testing::Must(first->Step()));
  EXPECT_FALSE(testing::Must(second->Step())) << "its own binding, not the first one's";
  EXPECT_EQ(first->ColumnInt64(0), 1);
}

TEST_F(SqliteTest, BindErrorSurfacesAtStep) {
  Result<Statement> stmt = db_->Prepare("INSERT INTO t (k, v) VALUES (?1, ?2)");
  ASSERT_TRUE(stmt.ok());
  stmt->Bind(1, int64_t{1}).Bind(2, "a").Bind(3, "out of range");
  Status s = stmt->Run();
  EXPECT_EQ(s.code(), Code::kIo);
  EXPECT_THAT(s.message(), HasSubstr("bind"));
  EXPECT_EQ(Rows(), 0);
}

TEST_F(SqliteTest, TextRoundTripsWithEmbeddedNul) {
  const std::string text("a\0b", 3);
  Result<Statement> insert = db_->Prepare("INSERT INTO t (k, v) VALUES (1, ?1)");
  ASSERT_TRUE(insert.ok());
  insert->Bind(1, text);
  ASSERT_TRUE(insert->Run().ok());
  Result<Statement> select = db_->Prepare("SELECT v FROM t WHERE k = 1");
  ASSERT_TRUE(select.ok());
  ASSERT_TRUE(testing::Must(select->Step()));
  EXPECT_EQ(select->ColumnText(0), text);
}

TEST_F(SqliteTest, TransactionRollsBackUnlessCommitted) {
  {
    Result<Transaction> txn = Transaction::Begin(&*db_);
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(db_->Exec("INSERT INTO t (k, v) VALUES (1, 'dropped')").ok());
  }
  EXPECT_EQ(Rows(), 0);
  {
    Result<Transaction> txn = Transaction::Begin(&*db_);
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(db_->Exec("INSERT INTO t (k, v) VALUES (2, 'kept')").ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  EXPECT_EQ(Rows(), 1);
}

TEST_F(SqliteTest, TransactionInsideAnotherIsASavepoint) {
  {
    Result<Transaction> outer = Transaction::Begin(&*db_);
    ASSERT_TRUE(outer.ok());
    ASSERT_TRUE(db_->Exec("INSERT INTO t (k, v) VALUES (1, 'outer')").ok());
    {
      Result<Transaction> undone = Transaction::Begin(&*db_);
      ASSERT_TRUE(undone.ok());
      ASSERT_TRUE(db_->Exec("INSERT INTO t (k, v) VALUES (2, 'undone')").ok());
    }
    EXPECT_TRUE(db_->InTransaction()) << "undoing the inner one leaves the outer one open";
    {
      Result<Transaction> kept = Transaction::Begin(&*db_);
      ASSERT_TRUE(kept.ok());
      ASSERT_TRUE(db_->Exec("INSERT INTO t (k, v) VALUES (3, 'inner')").ok());
      ASSERT_TRUE(kept->Commit().ok());
    }
    EXPECT_TRUE(db_->InTransaction()) << "an inner commit is not the outer one's";
    ASSERT_TRUE(outer->Commit().ok());
  }
  EXPECT_FALSE(db_->InTransaction());
  EXPECT_EQ(testing::Must(db_->QueryText("SELECT group_concat(k) FROM t")), "1,3");
  {
    Result<Transaction> outer = Transaction::Begin(&*db_);
    ASSERT_TRUE(outer.ok());
    Result<Transaction> inner = Transaction::Begin(&*db_);
    ASSERT_TRUE(inner.ok());
    ASSERT_TRUE(db_->Exec("INSERT INTO t (k, v) VALUES (4, 'inner')").ok());
    ASSERT_TRUE(inner->Commit().ok());
  }
  EXPECT_EQ(Rows(), 2) << "an inner commit is undone with its outer transaction";
}

TEST_F(SqliteTest, WriterIsMetAtBeginUnderBusyTimeout) {
  Result<Db> other = Db::Open(db_path());
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(other->SetBusyTimeout(0).ok());
  Result<Transaction> held = Transaction::Begin(&*db_);
  ASSERT_TRUE(held.ok());
  Result<Transaction> second = Transaction::Begin(&*other);
  EXPECT_EQ(second.status().code(), Code::kIo);
  EXPECT_THAT(second.status().message(), HasSubstr("locked"));
}

}  // namespace
}  // namespace pinpoint::store
