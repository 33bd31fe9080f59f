// Package analyzers holds go/analysis analyzers for controllers adopting
// statusapply, in a module of their own so that the library's users do not
// depend on golang.org/x/tools:
//
//   - statuswrite (package statuswrite) finds the status writes that replace
//     what they send whole (Status().Update, merge patches of the status
//     subresource, Cluster API's patch helper on objects with conditions) and
//     names the statusapply form to use instead;
//   - statusfunc (package statusfunc) checks the functions queued with
//     batcher.Status, Object, EditStatus and EditObject for side effects, and
//     the field manager names given to them and to the conditions helpers.
//
// cmd/statusapply-vet runs both under go vet -vettool, package plugin
// registers them with golangci-lint's module plugin system, and
// `statusapply vet` runs the vettool over package patterns.
package analyzers
