package ssa

import "encoding/json"

// MustTypeIntent is mustTypeIntent, for the tests outside the package.
func (a *Applier) MustTypeIntent(t Target, ac any) bool { return a.mustTypeIntent(t, ac) }

// CheckIntentSchemaAC is checkIntentSchemaAC on ac's JSON, for the tests
// outside the package.
func (a *Applier) CheckIntentSchemaAC(t Target, ac any) error {
	body, err := json.Marshal(ac)
	if err != nil {
		return err
	}
	return a.checkIntentSchemaAC(t, ac, body)
}
