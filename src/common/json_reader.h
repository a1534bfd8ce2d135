// JsonReader: typed reads of named fields from untrusted JSON, for every decoder of outside input
// (the socket API's codec, the job forms, the configuration, the shim's files). It never throws
// and reads a value only after checking its type. The first failure sticks and later reads do
// nothing, so a decoder reads its fields in turn and looks at error() once at the end.
//
// Two kinds of object, which differ in how a field is named in an error and in what null means:
//   Record(j, "request"): a stored or listed form (docs/api.md "JSON forms"). A missing field or
//     null keeps the default. Errors name the field "request.gpus must be an integer".
//   Message(j, prefix): a request or a configuration file. Null is a value of the wrong type.
//     Errors read "<prefix>\"gpus\" must be an integer".
// Every error is kInvalidArgument. The reader keeps a reference to `j`: `j` must outlive it.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pinpoint/status.h"

namespace pinpoint {

class JsonReader {
 public:
  static JsonReader Record(const nlohmann::json& j, std::string what);
  static JsonReader Message(const nlohmann::json& j, std::string prefix);

  // The field is there: present (and, in a record, not null), and nothing failed so far.
  bool Has(const char* key) const;
  // The field's value; only after Has(key).
  const nlohmann::json& At(const char* key) const { return j_[key]; }
  // Fails with "is missing" unless Has(key); returns Has(key).
  bool Require(const char* key);

  // An integer that fits Int ("must be an integer", "out of range").
  template <typename Int>
  void Integer(const char* key, Int* out);
  // An integer in [lo, hi], a range within Int's ("must be an integer", "must be between lo
  // and hi").
  template <typename Int>
  void Integer(const char* key, Int* out, int64_t lo, int64_t hi);
  // As Integer; absent or null is nullopt.
  template <typename Int>
  void OptionalInteger(const char* key, std::optional<Int>* out);
  void String(const char* key, std::string* out);
  // Present: a string of at least one byte ("must be a non-empty string").
  void NonEmptyString(const char* key, std::string* out);
  // Absent or null: nullopt; else a string.
  void OptionalString(const char* key, std::optional<std::string>* out);
  void Bool(const char* key, bool* out);
  void StringList(const char* key, std::vector<std::string>* out);
  template <typename Int>
  void IntegerList(const char* key, std::vector<Int>* out);
  void StringMap(const char* key, std::map<std::string, std::string>* out);
  // A name that `from_name` knows ("is not a known <what>" for one it does not).
  template <typename E>
  void Name(const char* key, E* out, std::optional<E> (*from_name)(const std::string&),
            const char* what);
  // A nested form, read by `decode`, whose error is passed on as it is.
  template <typename T>
  void Object(const char* key, T* out, Result<T> (*decode)(const nlohmann::json&));
  // Absent or null: nullopt; else as Object.
  template <typename T>
  void OptionalObject(const char* key, std::optional<T>* out,
                      Result<T> (*decode)(const nlohmann::json&));
  template <typename T>
  void ObjectList(const char* key, std::vector<T>* out, Result<T> (*decode)(const nlohmann::json&));

  // Fails naming the field: Fail("gpus", "must be even").
  void Fail(const char* key, const std::string& why);
  // Fails with `status` as it is (an error of a nested form, a sentence of the caller's own).
  void Fail(Status status);
  bool ok() const { return error_.ok(); }
  const Status& error() const { return error_; }
  // `value` read, or the error: the last line of a decoder.
  template <typename T>
  Result<T> Done(T value) const {
    if (!ok()) return error_;
    return value;
  }

 private:
  enum class Kind { kRecord, kMessage };
  JsonReader(const nlohmann::json& j, Kind kind, std::string name);
  template <typename Int>
  static bool FitsInteger(const nlohmann::json& v, Int* out);

  const nlohmann::json& j_;
  Kind kind_;
  std::string name_;  // the record's name, or the message's prefix
  Status error_;
};

// Whether `v` is an integer that fits Int; if so, *out holds it.
template <typename Int>
bool JsonReader::FitsInteger(const nlohmann::json& v, Int* out) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<Int>::max())) return false;
    *out = static_cast<Int>(u);
    return true;
  }
  if (!v.is_number_integer()) return false;
  int64_t s = v.get<int64_t>();
  if (s < static_cast<int64_t>(std::numeric_limits<Int>::min()) ||
      (s > 0 && static_cast<uint64_t>(s) > static_cast<uint64_t>(std::numeric_limits<Int>::max())))
    return false;
  *out = static_cast<Int>(s);
  return true;
}

template <typename Int>
void JsonReader::Integer(const char* key, Int* out) {
  if (!Has(key)) return;
  if (!At(key).is_number_integer()) return Fail(key, "must be an integer");
  if (!FitsInteger(At(key), out)) Fail(key, "out of range");
}

template <typename Int>
void JsonReader::Integer(const char* key, Int* out, int64_t lo, int64_t hi) {
  if (!Has(key)) return;
  const nlohmann::json& v = At(key);
  if (!v.is_number_integer()) return Fail(key, "must be an integer");
  int64_t value = 0;
  if (!FitsInteger(v, &value) || value < lo || value > hi)
    return Fail(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  *out = static_cast<Int>(value);
}

template <typename Int>
void JsonReader::OptionalInteger(const char* key, std::optional<Int>* out) {
  if (!ok()) return;
  if (!j_.contains(key) || j_[key].is_null()) {
    out->reset();
    return;
  }
  Int value{};
  Integer(key, &value);
  if (ok()) *out = value;
}

template <typename Int>
void JsonReader::IntegerList(const char* key, std::vector<Int>* out) {
  if (!Has(key)) return;
  const nlohmann::json& v = At(key);
  const char* why = "must be an array of integers";
  if (!v.is_array()) return Fail(key, why);
  std::vector<Int> values;
  values.reserve(v.size());
  for (const auto& e : v) {
    Int value{};
    if (!FitsInteger(e, &value)) return Fail(key, why);
    values.push_back(value);
  }
  *out = std::move(values);
}

template <typename E>
void JsonReader::Name(const char* key, E* out, std::optional<E> (*from_name)(const std::string&),
                      const char* what) {
  if (!Has(key)) return;
  std::string name;
  String(key, &name);
  if (!ok()) return;
  std::optional<E> value = from_name(name);
  if (!value) return Fail(key, std::string("is not a known ") + what);
  *out = *value;
}

template <typename T>
void JsonReader::Object(const char* key, T* out, Result<T> (*decode)(const nlohmann::json&)) {
  if (!Has(key)) return;
  Result<T> value = decode(At(key));
  if (!value.ok()) return Fail(value.status());
  *out = std::move(value).value();
}

template <typename T>
void JsonReader::OptionalObject(const char* key, std::optional<T>* out,
                                Result<T> (*decode)(const nlohmann::json&)) {
  if (!ok()) return;
  if (!j_.contains(key) || j_[key].is_null()) {
    out->reset();
    return;
  }
  T value{};
  Object(key, &value, decode);
  if (ok()) *out = std::move(value);
}

template <typename T>
void JsonReader::ObjectList(const char* key, std::vector<T>* out,
                            Result<T> (*decode)(const nlohmann::json&)) {
  if (!Has(key)) return;
  const nlohmann::json& v = At(key);
  if (!v.is_array()) return Fail(key, "must be an array");
  std::vector<T> values;
  values.reserve(v.size());
  for (const auto& e : v) {
    Result<T> value = decode(e);
    if (!value.ok()) return Fail(value.status());
    values.push_back(std::move(value).value());
  }
  *out = std::move(values);
}

}  // namespace pinpoint
