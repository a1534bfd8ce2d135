#include "common/env_select.h"

#include <gtest/gtest.h>

namespace pinpoint {
namespace {

using Env = std::map<std::string, std::string>;

const Env kEnv = {{"PATH", "/usr/bin"},   {"HOME", "/home/a"},        {"HF_TOKEN", "hf_x"},
                  {"WANDB_API_KEY", "k"}, {"AWS_ACCESS_KEY_ID", "A"}, {"DB_PASSWORD", "p"},
                  {"github_token", "g"},  {"OMP_NUM_THREADS", "8"},   {"SSH_AUTH_SOCK", "/tmp/s"}};

Env Select(const std::string& text, std::vector<std::string>* dropped = nullptr) {
  auto spec = ParseExport(text);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  auto env = SelectEnv(kEnv, *spec, DefaultEnvDeny(), dropped);
  EXPECT_TRUE(env.ok()) << env.status().message();
  return env.ok() ? *env : Env{};
}

TEST(EnvSelectTest, AllIsTheEnvironmentWithoutSecrets) {
  std::vector<std::string> dropped;
  Env env = Select("ALL", &dropped);
  EXPECT_EQ(env, (Env{{"PATH", "/usr/bin"}, {"HOME", "/home/a"}, {"OMP_NUM_THREADS", "8"}}));
  EXPECT_EQ(dropped, (std::vector<std::string>{"AWS_ACCESS_KEY_ID", "DB_PASSWORD", "HF_TOKEN",
                                               "SSH_AUTH_SOCK", "WANDB_API_KEY", "github_token"}));
}

// Cloud settings that are not secrets reach the job (a CA bundle, a region); their secrets match
// the generic patterns (AWS_SECRET_ACCESS_KEY: *SECRET*, AWS_SESSION_TOKEN: *TOKEN).
TEST(EnvSelectTest, CloudSettingsPassTheirSecretsDoNot) {
  for (const char* name : {"AWS_CA_BUNDLE", "AWS_REGION", "AZURE_CONFIG_DIR",
                           // ML settings that merely contain the word (Hugging Face, tiktoken)
                           "TOKENIZERS_PARALLELISM", "TIKTOKEN_CACHE_DIR"})
    EXPECT_FALSE(DeniedBy(name, DefaultEnvDeny())) << name;
  for (const char* name :
       {"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID", "AZURE_CLIENT_SECRET"})
    EXPECT_TRUE(DeniedBy(name, DefaultEnvDeny())) << name;
}

TEST(EnvSelectTest, NoneListsAndSettings) {
  EXPECT_EQ(Select("NONE"), Env{});
  EXPECT_EQ(Select("PATH,NOT_SET"), (Env{{"PATH", "/usr/bin"}}));
  EXPECT_EQ(Select("NONE,OMP_NUM_THREADS=2"), (Env{{"OMP_NUM_THREADS", "2"}}));
  Env all_plus = Select("ALL,OMP_NUM_THREADS=2,X=a=b");
  EXPECT_EQ(all_plus["OMP_NUM_THREADS"], "2");
  EXPECT_EQ(all_plus["X"], "a=b");
  EXPECT_EQ(all_plus.count("HF_TOKEN"), 0u);
}

TEST(EnvSelectTest, NamingASecretIsAnErrorNotASilentDrop) {
  for (const char* text : {"HF_TOKEN", "ALL,HF_TOKEN", "NONE,MY_SECRET=x", "github_token"}) {
    auto spec = ParseExport(text);
    ASSERT_TRUE(spec.ok()) << text;
    auto env = SelectEnv(kEnv, *spec, DefaultEnvDeny(), nullptr);
    ASSERT_FALSE(env.ok()) << text;
    EXPECT_NE(env.status().message().find("look like secrets"), std::string::npos)
        << env.status().message();
  }
}

TEST(EnvSelectTest, BadExportTextIsOneError) {
  for (const char* text : {"", "PATH,,HOME", "PATH,ALL", "=x", "A B"}) {
    auto spec = ParseExport(text);
    EXPECT_FALSE(spec.ok()) << text;
    if (!spec.ok()) {
      EXPECT_EQ(spec.status().message().rfind("--export: ", 0), 0u) << spec.status().message();
    }
  }
}

TEST(EnvSelectTest, DropDeniedUsesTheGivenPatterns) {
  Env env = kEnv;
  std::vector<std::string> gone = DropDenied(env, {"OMP_*"});
  EXPECT_EQ(gone, std::vector<std::string>{"OMP_NUM_THREADS"});
  EXPECT_EQ(env.count("HF_TOKEN"), 1u) << "only the given patterns";
  EXPECT_FALSE(ValidateEnvPattern("").ok());
  EXPECT_FALSE(ValidateEnvPattern("A B").ok());
  EXPECT_TRUE(ValidateEnvPattern("*TOKEN*").ok());
}

}  // namespace
}  // namespace pinpoint
