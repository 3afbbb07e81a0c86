// Tests GORM (gorm.io/gorm with gorm.io/driver/mysql) against a running server (STRATA_PORT,
// set by crates/server/tests/drivers.rs): AutoMigrate of models with belongs-to, has-many and
// many2many associations (and again, as an application restarting does, and with a new field),
// creating a graph of records in one call, Preload, nested transactions (savepoints) and
// upserts with clause.OnConflict. Every test reads the rows back and compares them.
package gormsuite

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
)

type Company struct {
	ID   uint
	Name string `gorm:"size:100;not null"`
}

type CreditCard struct {
	ID     uint
	Number string `gorm:"size:32;not null"`
	UserID uint
}

type Language struct {
	ID   uint
	Code string `gorm:"size:8;uniqueIndex"`
}

type User struct {
	ID          uint
	Name        string `gorm:"size:64;uniqueIndex"`
	Age         int
	CompanyID   uint
	Company     Company
	CreditCards []CreditCard
	Languages   []Language `gorm:"many2many:user_languages"`
	Joined      time.Time  `gorm:"precision:6"`
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

type Stock struct {
	SKU  string `gorm:"primaryKey;size:32"`
	Qty  int
	Note string `gorm:"size:32"`
}

func open(t *testing.T, db string) *gorm.DB {
	t.Helper()
	port := os.Getenv("STRATA_PORT")
	if port == "" {
		t.Fatal("STRATA_PORT is not set (run through crates/server/tests/drivers.rs)")
	}
	host := os.Getenv("STRATA_HOST")
	if host == "" {
		host = "127.0.0.1"
	}
	dsn := fmt.Sprintf("root@tcp(%s:%s)/%s?parseTime=true&loc=UTC&charset=utf8mb4", host, port, db)
	g, err := gorm.Open(mysql.Open(dsn), &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	if err != nil {
		t.Fatalf("open %s: %v", db, err)
	}
	return g
}

// fresh returns a GORM handle on a new, empty database and the models migrated into it.
func fresh(t *testing.T, name string) *gorm.DB {
	t.Helper()
	admin := open(t, "")
	must(t, admin.Exec("DROP DATABASE IF EXISTS "+name).Error)
	must(t, admin.Exec("CREATE DATABASE "+name+" CHARACTER SET utf8mb4").Error)
	sqlDB, _ := admin.DB()
	sqlDB.Close()
	g := open(t, name)
	must(t, g.AutoMigrate(&Company{}, &User{}, &CreditCard{}, &Language{}, &Stock{}))
	t.Cleanup(func() {
		g.Exec("DROP DATABASE IF EXISTS " + name)
		if d, err := g.DB(); err == nil {
			d.Close()
		}
	})
	return g
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func count(t *testing.T, g *gorm.DB, table string) int64 {
	t.Helper()
	var n int64
	must(t, g.Table(table).Count(&n).Error)
	return n
}

var displayWidth = regexp.MustCompile(`bigint\(\d+\)`)

func TestAutoMigrateSchema(t *testing.T) {
	g := fresh(t, "gorm_schema")
	m := g.Migrator()
	for _, table := range []string{"companies", "users", "credit_cards", "languages", "user_languages", "stocks"} {
		if !m.HasTable(table) {
			t.Errorf("table %s missing", table)
		}
	}
	if !m.HasIndex(&User{}, "idx_users_name") || !m.HasIndex(&Language{}, "idx_languages_code") {
		t.Error("unique indexes missing")
	}
	if !m.HasConstraint(&User{}, "Company") || !m.HasConstraint(&User{}, "CreditCards") {
		t.Error("foreign keys missing")
	}
	cols, err := m.ColumnTypes(&User{})
	must(t, err)
	types := map[string]string{}
	for _, c := range cols {
		full, _ := c.ColumnType()
		// MySQL 8 shows no integer display width, MariaDB shows bigint(20).
		types[c.Name()] = displayWidth.ReplaceAllString(strings.ToLower(full), "bigint")
	}
	want := map[string]string{"id": "bigint unsigned", "name": "varchar(64)", "age": "bigint", "company_id": "bigint unsigned", "joined": "datetime(6)", "created_at": "datetime(3)"}
	for k, v := range want {
		if types[k] != v {
			t.Errorf("users.%s is %q, want %q (all: %v)", k, types[k], v, types)
		}
	}
	// A restarted application migrates again: nothing to do, nothing lost.
	must(t, g.Create(&User{Name: "keep", Company: Company{Name: "K"}, Joined: time.Now()}).Error)
	must(t, g.AutoMigrate(&Company{}, &User{}, &CreditCard{}, &Language{}, &Stock{}))
	if n := count(t, g, "users"); n != 1 {
		t.Errorf("users after the second AutoMigrate: %d", n)
	}
	// A new field becomes a new column.
	type Stock2 struct {
		SKU      string `gorm:"primaryKey;size:32"`
		Qty      int
		Note     string `gorm:"size:32"`
		Location string `gorm:"size:16;default:'main'"`
	}
	must(t, g.Table("stocks").AutoMigrate(&Stock2{}))
	if !g.Migrator().HasColumn("stocks", "location") {
		t.Error("AutoMigrate did not add stocks.location")
	}
}

func TestCreateWithAssociationsAndPreload(t *testing.T) {
	g := fresh(t, "gorm_assoc")
	joined := time.Date(2024, 2, 3, 4, 5, 6, 789012000, time.UTC)
	en, fr := Language{Code: "en"}, Language{Code: "fr"}
	must(t, g.Create(&[]*Language{&en, &fr}).Error)
	users := []User{
		{Name: "ann", Age: 30, Joined: joined, Company: Company{Name: "Acme"},
			CreditCards: []CreditCard{{Number: "1111"}, {Number: "2222"}}, Languages: []Language{en, fr}},
		{Name: "bob", Age: 40, Joined: joined.Add(time.Microsecond), Company: Company{Name: "Beta"},
			Languages: []Language{fr, {Code: "de"}}},
	}
	must(t, g.Create(&users).Error)
	if users[0].ID == 0 || users[1].ID == 0 || users[0].Company.ID == 0 || users[0].CreditCards[1].ID == 0 {
		t.Fatalf("ids not filled in: %+v", users)
	}
	for table, want := range map[string]int64{"companies": 2, "users": 2, "credit_cards": 2, "languages": 3, "user_languages": 4} {
		if n := count(t, g, table); n != want {
			t.Errorf("%s has %d rows, want %d", table, n, want)
		}
	}

	var got []User
	must(t, g.Preload("Company").Preload("CreditCards", func(db *gorm.DB) *gorm.DB { return db.Order("number") }).
		Preload("Languages", func(db *gorm.DB) *gorm.DB { return db.Order("code") }).Order("name").Find(&got).Error)
	if len(got) != 2 {
		t.Fatalf("%d users", len(got))
	}
	ann, bob := got[0], got[1]
	if ann.Name != "ann" || ann.Company.Name != "Acme" || bob.Company.Name != "Beta" {
		t.Errorf("belongs-to: %+v / %+v", ann.Company, bob.Company)
	}
	if len(ann.CreditCards) != 2 || ann.CreditCards[0].Number != "1111" || ann.CreditCards[1].Number != "2222" || len(bob.CreditCards) != 0 {
		t.Errorf("has-many: %+v / %+v", ann.CreditCards, bob.CreditCards)
	}
	codes := func(ls []Language) []string {
		var s []string
		for _, l := range ls {
			s = append(s, l.Code)
		}
		return s
	}
	if fmt.Sprint(codes(ann.Languages)) != "[en fr]" || fmt.Sprint(codes(bob.Languages)) != "[de fr]" {
		t.Errorf("many2many: %v / %v", codes(ann.Languages), codes(bob.Languages))
	}
	if !ann.Joined.Equal(joined) || !bob.Joined.Equal(joined.Add(time.Microsecond)) {
		t.Errorf("DATETIME(6): %v / %v", ann.Joined, bob.Joined)
	}

	// Association mode: append, count, delete (the join row only).
	must(t, g.Model(&bob).Association("CreditCards").Append(&CreditCard{Number: "3333"}))
	if n := g.Model(&bob).Association("Languages").Count(); n != 2 {
		t.Errorf("bob speaks %d languages", n)
	}
	must(t, g.Model(&ann).Association("Languages").Delete(&en))
	if n := count(t, g, "user_languages"); n != 3 {
		t.Errorf("user_languages after Delete: %d", n)
	}
	if n := count(t, g, "languages"); n != 3 {
		t.Errorf("languages after Delete: %d", n)
	}
	// Joins on a belongs-to with a condition on the joined table.
	var names []string
	must(t, g.Model(&User{}).Joins("Company").Where("Company.name = ?", "Beta").Pluck("users.name", &names).Error)
	if fmt.Sprint(names) != "[bob]" {
		t.Errorf("Joins: %v", names)
	}
}

func TestNestedTransactions(t *testing.T) {
	g := fresh(t, "gorm_tx")
	errInner := errors.New("roll back the inner transaction")
	err := g.Transaction(func(tx *gorm.DB) error {
		must(t, tx.Create(&Company{Name: "outer-1"}).Error)
		if e := tx.Transaction(func(tx2 *gorm.DB) error {
			must(t, tx2.Create(&Company{Name: "inner"}).Error)
			return errInner
		}); !errors.Is(e, errInner) {
			t.Errorf("inner transaction returned %v", e)
		}
		must(t, tx.Transaction(func(tx2 *gorm.DB) error {
			return tx2.Create(&Company{Name: "inner-kept"}).Error
		}))
		must(t, tx.Create(&Company{Name: "outer-2"}).Error)
		return nil
	})
	must(t, err)

	// SavePoint / RollbackTo by hand.
	tx := g.Begin()
	must(t, tx.Create(&Company{Name: "manual-1"}).Error)
	must(t, tx.SavePoint("sp1").Error)
	must(t, tx.Create(&Company{Name: "manual-2"}).Error)
	must(t, tx.RollbackTo("sp1").Error)
	must(t, tx.Create(&Company{Name: "manual-3"}).Error)
	must(t, tx.Commit().Error)

	// A failing outer transaction loses everything, savepoints included.
	_ = g.Transaction(func(tx *gorm.DB) error {
		must(t, tx.Create(&Company{Name: "lost"}).Error)
		return errors.New("abort")
	})

	var names []string
	must(t, g.Model(&Company{}).Order("id").Pluck("name", &names).Error)
	if fmt.Sprint(names) != "[outer-1 inner-kept outer-2 manual-1 manual-3]" {
		t.Errorf("companies: %v", names)
	}
	// A duplicate key inside a nested transaction: the outer one carries on.
	must(t, g.Create(&Language{Code: "en"}).Error)
	must(t, g.Transaction(func(tx *gorm.DB) error {
		if e := tx.Transaction(func(tx2 *gorm.DB) error { return tx2.Create(&Language{Code: "en"}).Error }); e == nil {
			t.Error("duplicate unique key accepted")
		}
		return tx.Create(&Language{Code: "es"}).Error
	}))
	var codes []string
	must(t, g.Model(&Language{}).Order("code").Pluck("code", &codes).Error)
	if fmt.Sprint(codes) != "[en es]" {
		t.Errorf("languages: %v", codes)
	}
}

func TestUpsertOnConflict(t *testing.T) {
	g := fresh(t, "gorm_upsert")
	must(t, g.Create(&[]Stock{{SKU: "a", Qty: 1, Note: "n1"}, {SKU: "b", Qty: 2, Note: "n2"}}).Error)
	// Add to the quantity on a duplicate key.
	r := g.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "sku"}},
		DoUpdates: clause.Assignments(map[string]interface{}{"qty": gorm.Expr("qty + VALUES(qty)")}),
	}).Create(&[]Stock{{SKU: "a", Qty: 10}, {SKU: "c", Qty: 3, Note: "n3"}})
	must(t, r.Error)
	// Overwrite the listed columns.
	must(t, g.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "sku"}},
		DoUpdates: clause.AssignmentColumns([]string{"note"}),
	}).Create(&Stock{SKU: "b", Qty: 99, Note: "new"}).Error)
	// Ignore duplicates.
	must(t, g.Clauses(clause.OnConflict{DoNothing: true}).Create(&Stock{SKU: "c", Qty: 42}).Error)
	// Every column.
	must(t, g.Clauses(clause.OnConflict{UpdateAll: true}).Create(&Stock{SKU: "d", Qty: 4, Note: "n4"}).Error)
	must(t, g.Clauses(clause.OnConflict{UpdateAll: true}).Create(&Stock{SKU: "d", Qty: 5, Note: "n5"}).Error)

	var rows []Stock
	must(t, g.Order("sku").Find(&rows).Error)
	got := []string{}
	for _, s := range rows {
		got = append(got, fmt.Sprintf("%s:%d:%s", s.SKU, s.Qty, s.Note))
	}
	sort.Strings(got)
	if fmt.Sprint(got) != "[a:11:n1 b:2:new c:3:n3 d:5:n5]" {
		t.Errorf("stocks: %v", got)
	}
}
