// Custom resources as the API server serves them (apiextensions.k8s.io/v1),
// for the stand-in: the CustomResourceDefinitions it holds decide which
// resources of their groups exist, what their objects must look like (the
// structural OpenAPI schema: types, required fields, bounds, enums,
// nullable, unknown fields pruned or, under fieldValidation=Strict,
// refused), whether status is a subresource, and the columns `kubectl get`
// prints (served as a meta.k8s.io/v1 Table).
#ifndef MIGSERVE_KUBE_TESTING_CUSTOM_RESOURCES_H_
#define MIGSERVE_KUBE_TESTING_CUSTOM_RESOURCES_H_

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kube/testing/api_path.h"

namespace migserve::kube {

// One served version of a CustomResourceDefinition.
struct CustomResource {
  std::string group, version, plural, singular, kind;
  std::vector<std::string> short_names;
  bool namespaced = true;
  bool status_subresource = false;
  nlohmann::json schema;           // openAPIV3Schema
  nlohmann::json printer_columns;  // additionalPrinterColumns
};

// Every served version of the CustomResourceDefinitions among `objects`
// (the stand-in's store, by path).
std::vector<CustomResource> CustomResources(
    const std::map<std::string, nlohmann::json>& objects);

// The custom resource `ref` names, or nullopt where no definition serves
// it; `group_defined` tells whether a definition names its group at all
// (then the resource does not exist, as the API server answers 404).
std::optional<CustomResource> FindCustomResource(
    const std::map<std::string, nlohmann::json>& objects, const ApiPath& ref,
    bool* group_defined);

// What checking an object against its schema found: the errors as the API
// server words them ("spec.gpus: Required value"), and the fields the
// schema does not know (pruned from the object).
struct SchemaFindings {
  std::vector<std::string> errors;
  std::vector<std::string> unknown;
};
SchemaFindings CheckSchema(const nlohmann::json& schema,
                           nlohmann::json* object);

// The values `path` picks in `object`: the JSONPath subset printer columns
// use (.a.b, [N], [?(@.key=="value")]); empty if none.
std::vector<nlohmann::json> JsonPathValues(const nlohmann::json& object,
                                           const std::string& path);

// `objects` as the meta.k8s.io/v1 Table `kubectl get` asks for: NAME, the
// printer columns (an Age as 5s, 3m, 2h), each row's object its metadata.
nlohmann::json PrinterTable(const CustomResource& resource,
                            const std::vector<nlohmann::json>& objects,
                            const std::string& resource_version);

// Discovery, as kubectl reads it before it names a resource: /api, /apis
// and /apis/GROUP/VERSION (the custom resources' groups and the core
// resources the stand-in serves); nullopt for another path.
std::optional<nlohmann::json> Discovery(
    const std::map<std::string, nlohmann::json>& objects,
    const std::string& path);

// The top-level fields of `object` that its built-in kind (at `ref`) does
// not have, as the API server's strict decoding names them; none for a
// kind the table does not describe (events, custom resources: those are
// checked against their schema).
std::vector<std::string> UnknownTopLevelFields(const ApiPath& ref,
                                               const nlohmann::json& object);

// The kind of the objects at `ref` (a built-in resource or one a
// definition among `objects` serves), or "" where none is known.
std::string KindAt(const std::map<std::string, nlohmann::json>& objects,
                   const ApiPath& ref);

// OpenAPI v3 as kubectl reads it to learn whether the server validates
// fields itself (cli-runtime's query-param verifier: `kubectl apply` and
// `create` send fieldValidation=Strict only where a PATCH operation of the
// kind lists that parameter, and otherwise refuse to go on without
// --validate=false): /openapi/v3, the index of group versions, and
// /openapi/v3/api/v1 or /openapi/v3/apis/GROUP/VERSION, each resource's
// item path with its PATCH operation, its kind and the query parameters
// the stand-in honours; nullopt for another path.
std::optional<nlohmann::json> OpenApiV3(
    const std::map<std::string, nlohmann::json>& objects,
    const std::string& path);

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_TESTING_CUSTOM_RESOURCES_H_
