package clisuite

// The types below spell out the commands' documents (-o json, -o yaml) as a
// script would read them; decoding into them checks the field names the
// documentation promises.

// documentGroupVersion is the apiVersion of every document.
const documentGroupVersion = "cli.statusapply.io/v1alpha1"

// typeMetaJSON is a document's or an item's apiVersion and kind.
type typeMetaJSON struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// objectRefJSON names an object.
type objectRefJSON struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

// ownersJSON is the output of `owners -o json`: a StatusOwnershipList.
type ownersJSON struct {
	typeMetaJSON `json:",inline"`
	Items        []struct {
		typeMetaJSON       `json:",inline"`
		Object             objectRefJSON `json:"object"`
		ManagedFields      bool          `json:"managedFields"`
		Note               string        `json:"note"`
		Managers           []managerJSON `json:"managers"`
		SharedStatusFields []sharedJSON  `json:"sharedStatusFields"`
	} `json:"items"`
	Errors []struct {
		Object string `json:"object"`
		Error  string `json:"error"`
	} `json:"errors"`
}

// managerJSON is one managedFields entry in the JSON output.
type managerJSON struct {
	Manager             string   `json:"manager"`
	Operation           string   `json:"operation"`
	Subresource         string   `json:"subresource"`
	APIVersion          string   `json:"apiVersion"`
	Time                string   `json:"time"`
	Legacy              bool     `json:"legacy"`
	Conditions          []string `json:"conditions"`
	WholeConditionsList bool     `json:"wholeConditionsList"`
	OtherStatusFields   []string `json:"otherStatusFields"`
}

// sharedJSON is one shared status field in the JSON output.
type sharedJSON struct {
	Path      string   `json:"path"`
	Condition string   `json:"condition"`
	Managers  []string `json:"managers"`
}

// lintJSON is the output of `lint -o json`: a LintFindingList.
type lintJSON struct {
	typeMetaJSON `json:",inline"`
	Summary      struct {
		CRDs     int `json:"crds"`
		Errors   int `json:"errors"`
		Warnings int `json:"warnings"`
	} `json:"summary"`
	Items []struct {
		typeMetaJSON `json:",inline"`
		File         string `json:"file"`
		CRD          string `json:"crd"`
		Version      string `json:"version"`
		Path         string `json:"path"`
		Severity     string `json:"severity"`
		Message      string `json:"message"`
	} `json:"items"`
}

// migrateJSON is the output of `migrate -o json`: a MigrationList.
type migrateJSON struct {
	typeMetaJSON `json:",inline"`
	DryRun       bool `json:"dryRun"`
	Plan         struct {
		Managers      map[string]string `json:"managers"`
		Conditions    map[string]string `json:"conditions"`
		ReleaseShared bool              `json:"releaseShared"`
	} `json:"plan"`
	Summary struct {
		Total     int `json:"total"`
		Changed   int `json:"changed"`
		Unchanged int `json:"unchanged"`
		Failed    int `json:"failed"`
	} `json:"summary"`
	Items []struct {
		typeMetaJSON `json:",inline"`
		Object       objectRefJSON `json:"object"`
		Outcome      string        `json:"outcome"`
		Seeded       bool          `json:"seeded"`
		Attempts     int           `json:"attempts"`
		Error        string        `json:"error"`
		Before       *struct {
			Managers []managerJSON `json:"managers"`
		} `json:"before"`
		After *struct {
			Managers []managerJSON `json:"managers"`
		} `json:"after"`
	} `json:"items"`
}
